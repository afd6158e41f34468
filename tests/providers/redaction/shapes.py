"""Realistic secret shapes as they appear in commands and tool output, and look-alikes that are not.

Every secret is split in the source (`"ghp_" + "…"`) so this file itself trips no scanner. Each
shape is `(label, text, secret)`: after redaction no 8-character piece of `secret` may remain.
"""

GITHUB_CLASSIC = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_OAUTH = "gho_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8"
GITHUB_APP = "ghs_" + "Qq0Pp9Oo8Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1"
GITHUB_FINE = "github_pat_" + "11ABCDEFG0abcdefghijkl_mnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghij"
GITLAB = "glpat-" + "xY7zAbC9dEfGhIjKlMnO"
SLACK_BOT = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
SLACK_HOOK = "https://hooks.slack.com/services/" + "T0A1B2C3D/B0A1B2C3D/" + "aBcDeFgHiJkLmNoPqRsTuVwX"
AWS_ACCESS = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
STRIPE_LIVE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
STRIPE_TEST = "sk_test_" + "51HxYzAbCdEfGhIjKlMnOpQr"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw"
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "\n7bQ1AbCdEf\n-----END RSA PRIVATE KEY-----"
OPENSSH = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----"
)
URL_PASSWORD = "hunter2pass" + "Word9"
FLAG_PASSWORD = "Sup3rS3cret" + "Pw!x"
PG_PASSWORD = "pgS3cret" + "Value9"
MYSQL_PWD = "myS3cret" + "Pwd42"
YAML_TOKEN = "tok_9f8e7d6c" + "5b4a3c2d1"
JSON_SECRET = "jsonSecret" + "Value123"
ENV_SECRET = "dotEnvS3cret" + "42xyz"
BASIC = "YWxpY2U6aHVudGVy" + "MnBhc3M="
BEARER_SHORT = "abc123def" + "456"
CURL_USER_PASSWORD = "curlP4ss" + "word"

SHAPES: list[tuple[str, str, str]] = [
    (
        "github classic in output",
        f"remote: Invalid username or token {GITHUB_CLASSIC} for https://github.com",
        GITHUB_CLASSIC,
    ),
    ("github oauth in a remote", f"git remote set-url origin https://{GITHUB_OAUTH}@github.com/o/r.git", GITHUB_OAUTH),
    ("github app token", f"x-access-token:{GITHUB_APP}", GITHUB_APP),
    ("github fine-grained", f"export GH_TOKEN={GITHUB_FINE}", GITHUB_FINE),
    ("github token cut by an excerpt", f"token {GITHUB_CLASSIC[:22]}…", GITHUB_CLASSIC[:22]),
    ("gitlab personal token", f"fatal: Authentication failed, token {GITLAB} rejected", GITLAB),
    ("slack bot token", f"SLACK_BOT={SLACK_BOT}", SLACK_BOT),
    ("slack webhook", f"curl -X POST {SLACK_HOOK} -d @msg.json", SLACK_HOOK.rsplit("/", 1)[1]),
    ("aws access key", f"aws_access_key_id = {AWS_ACCESS}", AWS_ACCESS),
    ("aws secret key", f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
    ("aws secret env", f"AWS_SECRET_ACCESS_KEY={AWS_SECRET} aws s3 ls", AWS_SECRET),
    ("stripe live key", f"Stripe::AuthenticationError: Invalid API Key provided: {STRIPE_LIVE}", STRIPE_LIVE),
    ("stripe test key", f"stripe listen --api-key {STRIPE_TEST}", STRIPE_TEST),
    ("jwt in a cookie", f"Set-Cookie: session={JWT}; Path=/", JWT),
    ("pem block", f"$ cat id_rsa\n{PEM}\nexit 0", PEM_BODY),
    ("openssh block", OPENSSH, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"),
    ("url credentials", f"git clone https://alice:{URL_PASSWORD}@example.com/r.git", URL_PASSWORD),
    ("password flag", f"mysql -u root --password={FLAG_PASSWORD} app", FLAG_PASSWORD),
    ("password flag, spaced", f"redis-cli --pass {FLAG_PASSWORD} ping", FLAG_PASSWORD),
    ("pg env prefix", f"PGPASSWORD={PG_PASSWORD} psql -h db -U app", PG_PASSWORD),
    ("mysql env prefix", f"MYSQL_PWD={MYSQL_PWD} mysql -u root", MYSQL_PWD),
    ("yaml token", f"  api_token: {YAML_TOKEN}\n  region: eu-west-1", YAML_TOKEN),
    ("json secret", f'{{"client_secret": "{JSON_SECRET}", "client_id": "abc"}}', JSON_SECRET),
    (".env secret", f"SECRET_KEY={ENV_SECRET}\nDEBUG=false", ENV_SECRET),
    ("basic header", f"curl -H 'Authorization: Basic {BASIC}' https://api.example.com", BASIC),
    ("bearer header", f'curl -H "Authorization: Bearer {BEARER_SHORT}" https://api', BEARER_SHORT),
    ("curl user", f"curl -u alice:{CURL_USER_PASSWORD} https://api.example.com", CURL_USER_PASSWORD),
]
"""What must be masked, in the shapes commands and outputs carry them."""

NEGATIVE_CONTROLS: list[str] = [
    "commit 8cc42b0a1f7e3c9d2b4a6e8f0c1d3e5f7a9b1c2d",
    "HEAD is now at 3e5f7a9 fix: flaky test",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "md5 d41d8cd98f00b204e9800998ecf8427e  empty.txt",
    "session 4d5611e5-241a-462a-8d15-5122611a9569",
    "task-output-waiting-1770927708311",
    "export ANTHROPIC_API_KEY=sk-ant-...  # or use OAuth",
    "const apiKey = await getApiKeyForModel(this.model);",
    "password = ${DB_PASSWORD}",
    'api_key = "<your key here>"',
    "the password field is validated on submit",
    "def connect(host: str, password: str, token: Optional[str] = None):",
    "client = Client(api_key=api_key, token=token)",
    "params: { _csrf_token: csrfToken },",
    '"max_tokens": 4096, "input_tokens": 12',
    "TOKENIZERS_PARALLELISM=false python train.py",
    "PWD=/home/user/project OLDPWD=/home/user",
    "docker login --password-stdin ghcr.io",
    "docker run -u 1000:1000 image",
    "GOOGLE_APPLICATION_CREDENTIALS=/etc/gcp/key.json",
    "git push -u origin main",
    "Authorization: Bearer $TOKEN",
    "password: null",
    "[REDACTED:github-token] was masked before",
]
"""Look-alikes that must survive unchanged: hashes, SHAs, UUIDs, placeholders, code."""
