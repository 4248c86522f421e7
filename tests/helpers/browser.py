"""Headless Chromium driven over the DevTools protocol (websocket-client), for the inspect pages
and the documentation site.

`Browser` starts Debian's `chromium` with a fresh profile and no network services, opens a page
from disk or a URL, and gives back what the tests and the docs' screenshots need: console errors and
uncaught exceptions, the URLs it requested, the value of a JavaScript expression, and a PNG
screenshot. A missing
`chromium` is an error, never a skip. Nothing here knows tokenizers.
"""

import base64
import json
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import websocket

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--disable-dev-shm-usage",  # containers often have a tiny /dev/shm, which crashes renderers
    "--remote-debugging-port=0",
)
TIMEOUT = 60.0  # seconds for Chromium to start, or a page to load


def chromium() -> str:
    """The Chromium executable; a missing one fails the caller (CI installs it: .ci/run)."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    raise AssertionError("chromium is not installed (apt-get install -y chromium); .ci/run installs it")


class Browser:
    """One headless Chromium with one tab; use as a context manager."""

    def __init__(self, width: int = 1280, height: int = 900) -> None:
        self.width, self.height = width, height
        self.profile = tempfile.TemporaryDirectory(prefix="bpe-chromium-", ignore_cleanup_errors=True)
        # Chromium's log goes to a file, not a pipe: a pipe nobody reads would fill and stall it
        self.log = Path(self.profile.name) / "chromium.log"
        with open(self.log, "w", encoding="utf-8") as log:
            self.process = subprocess.Popen(
                [chromium(), *FLAGS, f"--user-data-dir={self.profile.name}/profile", "about:blank"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        self.events: list[dict[str, Any]] = []
        self.next_id = 0
        address = self._devtools_address()
        self.socket = websocket.create_connection(address, timeout=TIMEOUT, suppress_origin=True)
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def _devtools_address(self) -> str:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            found = re.search(
                r"DevTools listening on (ws://\S+)", self.log.read_text(encoding="utf-8", errors="replace")
            )
            if found:
                return found.group(1)
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        log = self.log.read_text(encoding="utf-8", errors="replace").splitlines()
        raise AssertionError("chromium did not start:\n" + "\n".join(log[-20:]))

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.socket.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.profile.cleanup()

    def call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        """Send one DevTools command and wait for its answer, keeping the events that come first."""
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        self.socket.send(json.dumps(message))
        while True:
            answer = json.loads(self.socket.recv())
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise AssertionError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            self.events.append(answer)

    def open(self, page: Path | str) -> None:
        """Load a page, from disk (a Path) or a URL (a str), and wait for its load event."""
        self.events.clear()
        url = page if isinstance(page, str) else page.resolve().as_uri()
        self.call("Page.navigate", session=True, url=url)
        deadline = time.monotonic() + TIMEOUT
        while not any(event.get("method") == "Page.loadEventFired" for event in self.events):
            assert time.monotonic() < deadline, f"{page} did not load"
            self.events.append(json.loads(self.socket.recv()))

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and log errors (a failed load) since the page opened."""
        self.evaluate("0")  # let pending events arrive
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append(" ".join(str(arg.get("value", arg.get("description"))) for arg in params["args"]))
            elif method == "Runtime.exceptionThrown":
                found.append(str(params["exceptionDetails"]))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                found.append(params["entry"].get("text", ""))
        return found

    def requests(self) -> list[str]:
        """The URLs the page asked for since it opened (itself first)."""
        self.evaluate("0")
        return [
            event["params"]["request"]["url"]
            for event in self.events
            if event.get("method") == "Network.requestWillBeSent"
        ]

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serializable)."""
        result = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, full_page: bool = False) -> bytes:
        """A PNG of the viewport (or of the whole page, up to 6000 pixels high)."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            height = min(6000, int(self.evaluate("document.documentElement.scrollHeight")))
            params["clip"] = {"x": 0, "y": 0, "width": self.width, "height": height, "scale": 1}
            params["captureBeyondViewport"] = True
        return base64.b64decode(self.call("Page.captureScreenshot", session=True, **params)["data"])
