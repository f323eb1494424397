"""What the real-dataset tests share: a scripted HTTP server on 127.0.0.1 (testkit.real_data) and
no proxy between them and it."""
import pytest

from testkit.real_data import scripted_server


@pytest.fixture
def server():
    with scripted_server() as httpd:
        yield httpd


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch):
    """requests honours proxy variables; 127.0.0.1 must be reached directly."""
    for var in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
