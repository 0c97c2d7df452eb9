"""Secrets written by hand after the redactor was built, to check it on forms it was not
designed against (``bench/secret_scan.py`` reports them apart from the generated corpus).

Each entry is ``(text, needle)``: after redaction the needle must be gone. All values
are fake.
"""

from __future__ import annotations

from typing import Final

__all__ = ["HELD_OUT"]

HELD_OUT: Final[list[tuple[str, str]]] = [
    ("MYSQL_ROOT_PASSWORD=s3cr3t-v4lue docker compose up", "s3cr3t-v4lue"),
    ("DATABASE_URL=mysql://root:Sup3r$ecret@localhost:3306/app", "Sup3r$ecret"),
    ("redis://:p4ssw0rdXy@cache:6379/0", "p4ssw0rdXy"),
    ("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5tyh\n-----END EC PRIVATE KEY-----",
     "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5tyh"),
    ("aws_session_token = FwoGZXIvYXdzEBYaDH7kq2Lr0pT9wXs3yRz8mQ", "FwoGZXIvYXdzEBYaDH7kq2Lr0pT9wXs3yRz8mQ"),
    ("The alert hook is https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/q1W2e3R4t5Y6u7I8o9P0aSdF",
     "q1W2e3R4t5Y6u7I8o9P0aSdF"),
    ("git clone https://oauth2:glpat-Ab3dEf6hIj9kLm2nOp5q@gitlab.com/acme/app.git", "glpat-Ab3dEf6hIj9kLm2nOp5q"),
    ("Authorization: token ghp_7yH2kL9mN3pQ8rS1tV6wX0yZ5aB4cD2eF7gH", "ghp_7yH2kL9mN3pQ8rS1tV6wX0yZ5aB4cD2eF7gH"),
    ("我的银行卡密码是 837261，记一下", "837261"),
    ("登录口令为 Xk9#mm2p", "Xk9#mm2p"),
    ("秘钥: 8f3a9c2e7b1d4f6a0c5e9b8d7a6f5e4c", "8f3a9c2e7b1d4f6a0c5e9b8d7a6f5e4c"),
    ("api-key：Qw7Er9Ty2Ui4Op6As8Df", "Qw7Er9Ty2Ui4Op6As8Df"),
    ("OPENAI_API_KEY=sk-9hG2kL7mN4pQ1rS8tV5wX3yZ6aB0cD", "sk-9hG2kL7mN4pQ1rS8tV5wX3yZ6aB0cD"),
    ("the ssh password for the box is 'Tiger!2024'", "Tiger!2024"),
    ("pw: hunter22x", "hunter22x"),
    ("pass: Blue-Sky-77", "Blue-Sky-77"),
    ('{"secretKey": "mB4vC7xZ1nQ9wE3rT6yU"}', "mB4vC7xZ1nQ9wE3rT6yU"),
    ("client_secret=abc123def456ghi789jk", "abc123def456ghi789jk"),
    ("send it with Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.s5G7k9L2m4N6p8Q0r1T3",
     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.s5G7k9L2m4N6p8Q0r1T3"),
    ("x-api-key: 5f4e3d2c1b0a9f8e7d6c5b4a", "5f4e3d2c1b0a9f8e7d6c5b4a"),
    ('{"Authorization": "Basic dXNlcjpwYXNzd29yZDEyMw=="}', "dXNlcjpwYXNzd29yZDEyMw=="),
    ("export GITHUB_TOKEN=ghp_Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8", "ghp_Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8"),
    ("令牌：abcd1234efgh5678ijkl", "abcd1234efgh5678ijkl"),
    ("access key id AKIAQ4XW7Z2Y3V6U8T1S, secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLE1",
     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLE1"),
    ("DB_PASS=Mxq!82ndk", "Mxq!82ndk"),
    ("Here's my key: 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", "3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"),
    ("password：“Hunter22zz”", "Hunter22zz"),
    ("私钥如下：-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----",
     "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"),
    ("GET https://api.example.com/v1/search?api_key=abc123XYZ789qwe&q=shoes", "abc123XYZ789qwe"),
    ("my PIN is 4412", "4412"),
    ("use passcode 99817 to open", "99817"),
    ("stripe secret rk_live_51Hx9sK2eZvKYlo2C0aBcDeFg", "rk_live_51Hx9sK2eZvKYlo2C0aBcDeFg"),
    ("SENTRY_AUTH_TOKEN: sntrys_eyJpYXQiOjE3MDk3NzY0MDAuMDE", "sntrys_eyJpYXQiOjE3MDk3NzY0MDAuMDE"),
    ("我把 token 改成了 t0k3n-9f8e7d6c5b4a3 你记一下", "t0k3n-9f8e7d6c5b4a3"),
    ("WiFi 密码 HomeNet#2023", "HomeNet#2023"),
    ("Set-Cookie: JSESSIONID=A1B2C3D4E5F6G7H8I9J0; Path=/; HttpOnly", "A1B2C3D4E5F6G7H8I9J0"),
    ("ftp://deploy:Dep10y!now@files.example.org/releases", "Dep10y!now"),
    ("the master password = 'Kestrel-Orbit-44'", "Kestrel-Orbit-44"),
    ("azure: AccountKey=Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5d2FsZG8=;", "Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5d2FsZG8="),
    ("hf token hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
]
