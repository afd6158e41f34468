"""Secrets leave no trace in snippets; ids and placeholders that only look like secrets stay."""

import pytest

from obelisk_session_evidence.providers.redaction.redaction import find_secrets, redact
from tests.providers.redaction.shapes import NEGATIVE_CONTROLS, SHAPES

AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
SLACK_TOKEN = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
STRIPE_KEY = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
OPENAI_LEGACY = "sk-" + "abcdefghij1234567890" + "T3BlbkFJ" + "abcdefghij1234567890"
OPENAI_PROJECT = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6l"
ANTHROPIC_KEY = "sk-ant-api03-" + "x" * 20 + "Y9z8W7v6U5t4S3r2Q1p0" + "o" * 55 + "-AAAA"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n-----END RSA PRIVATE KEY-----"
GOOGLE_KEY = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        (f"export AWS_ACCESS_KEY_ID={AWS_KEY}", AWS_KEY, "aws-access-key"),
        (f"git push https://{GITHUB_TOKEN}@github.com/o/r", GITHUB_TOKEN, "github-token"),
        (f"SLACK={SLACK_TOKEN}", SLACK_TOKEN, "slack-token"),
        (f"stripe key {STRIPE_KEY}", STRIPE_KEY, "stripe-access-key"),
        (f"OPENAI_API_KEY: {OPENAI_LEGACY}", OPENAI_LEGACY, "openai-token"),
        (f"key {OPENAI_PROJECT} here", OPENAI_PROJECT, "openai-key"),
        (f"using {ANTHROPIC_KEY} now", ANTHROPIC_KEY, "anthropic-key"),
        (f"Authorization: Bearer {JWT}", JWT, "json-web-token"),
        (f"token={JWT};", JWT, "json-web-token"),
        (f"before\n{PRIVATE_KEY}\nafter", "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo", "private-key"),
        ("git clone https://alice:hunter2pass@example.com/r.git", "hunter2pass", "basic-auth-credentials"),
        ('password = "correct-horse-battery"', "correct-horse-battery", "secret-keyword"),
        ("export DB_PASSWORD=s3cr3tValue42", "s3cr3tValue42", "secret-keyword"),
        (f"maps key {GOOGLE_KEY}", GOOGLE_KEY, "google-api-key"),
        (
            "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwx0123' https://api",
            "abcdefghijklmnopqrstuvwx0123",
            "bearer-token",
        ),
    ],
)
def test_redact_removes_the_secret(text, secret, kind):
    redacted = redact(text)
    assert secret not in redacted
    assert f"[REDACTED:{kind}]" in redacted


def test_redact_masks_a_private_key_through_its_end_line():
    redacted = redact(f"before\n{PRIVATE_KEY}\nafter")
    assert redacted == "before\n[REDACTED:private-key]\nafter"


@pytest.mark.parametrize(
    "text",
    [
        "task-output-waiting-1770927708311",  # a naive `sk-…` pattern matches inside `task-…`
        "see /tmp/claude-1000/tasks/bd0afab.output and task-notification ids",
        "commit 8cc42b0a1f7e3c9d2b4a6e8f0c1d3e5f7a9b1c2d",
        "session 4d5611e5-241a-462a-8d15-5122611a9569",
        "export ANTHROPIC_API_KEY=sk-ant-...  # or use OAuth",
        "const apiKey = await getApiKeyForModel(this.model);",
        "password = ${DB_PASSWORD}",
        'api_key = "<your key here>"',
        "the password field is validated on submit",
        "sk-1234 is a placeholder id",
    ],
)
def test_redact_keeps_look_alikes(text):
    assert redact(text) == text


def test_find_secrets_reports_spans_in_the_original_text():
    text = f"a {AWS_KEY} b"
    (finding,) = find_secrets(text)
    assert text[finding.start : finding.end] == AWS_KEY


def test_redact_merges_overlapping_findings():
    text = f"Authorization: Bearer {JWT}"
    assert redact(text).count("[REDACTED") == 1


@pytest.mark.parametrize(("label", "text", "secret"), SHAPES, ids=[shape[0] for shape in SHAPES])
def test_every_shape_loses_its_whole_body(label, text, secret):
    redacted = redact(text)
    assert "[REDACTED:" in redacted
    assert not any(secret[i : i + 8] in redacted for i in range(len(secret) - 7)), redacted


@pytest.mark.parametrize("text", NEGATIVE_CONTROLS)
def test_negative_controls_survive(text):
    assert redact(text) == text


@pytest.mark.parametrize(("label", "text", "secret"), SHAPES, ids=[shape[0] for shape in SHAPES])
def test_redaction_is_idempotent(label, text, secret):
    once = redact(text)
    assert redact(once) == once
