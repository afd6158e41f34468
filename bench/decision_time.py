"""In-process time of one decision over the synthetic qualification cases; prints numbers only.

Every case runs arm 2 (admitted retrieval, the stand-in provider) `--repeat` times; the figures
are per decision: the whole pipeline, and compare-route alone. Run it from two trees on the
same machine, one after the other, to compare a change with its base.

Usage: python bench/decision_time.py [--per-family N] [--repeat N]
"""

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.qualify.arms import qualification_policy, run_admitted_retrieval
from obelisk_session_evidence.qualify.standin import standin_provider
from obelisk_session_evidence.qualify.synthetic import qualification_cases
from obelisk_session_evidence.tokenizer import load_encoder


def main() -> None:
    """Print the median and mean milliseconds per decision, whole and compare-route alone."""
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--per-family", type=int, default=4)
    options.add_argument("--repeat", type=int, default=5)
    arguments = options.parse_args()
    cases = qualification_cases(per_family=arguments.per_family)
    with tempfile.TemporaryDirectory() as cache:
        encoder = load_encoder(Path(cache))
    policy, thresholds = qualification_policy(), RouteThresholds()
    whole: list[float] = []
    compare: list[float] = []
    for _ in range(arguments.repeat):
        for case in cases:
            run, _ = run_admitted_retrieval(
                case, provider=standin_provider(case), encoder=encoder, thresholds=thresholds, policy=policy
            )
            whole.append(sum(run.latency_ms.values()))
            compare.append(run.latency_ms.get("compare-route", 0.0))
    print(f"cases {len(cases)}  decisions {len(whole)}")
    print(f"decision ms  median {statistics.median(whole):.3f}  mean {statistics.fmean(whole):.3f}")
    print(f"compare-route ms  median {statistics.median(compare):.3f}  mean {statistics.fmean(compare):.3f}")


if __name__ == "__main__":
    main()
