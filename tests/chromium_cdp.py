"""A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (standard library only).

Chromium reads commands from file descriptor 3 and writes replies and events
to descriptor 4, each message a JSON text ended by a NUL byte. Used by the
browser test and by benchmarks/report_size.py. Never downloads a browser: it
runs the Debian chromium found on PATH (or /usr/bin/chromium).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import signal
import tempfile
import time
from typing import Any

FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
    "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
)


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None


class CDPError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with one page; `call` sends a command and waits for its reply."""

    def __init__(self, executable: str | None = None, width: int = 1400, height: int = 1000) -> None:
        executable = executable or find_chromium()
        if executable is None:
            raise CDPError("chromium not found (install Debian's chromium package)")
        self.profile = tempfile.mkdtemp(prefix="t2m-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # The child needs the pipe ends on descriptors 3 and 4 exactly: copy them above 10 first
        # (close-on-exec) so that the two dup2 actions below cannot clobber each other.
        high_in = fcntl.fcntl(to_child_r, fcntl.F_DUPFD_CLOEXEC, 10)
        high_out = fcntl.fcntl(from_child_w, fcntl.F_DUPFD_CLOEXEC, 10)
        argv = [executable, *FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-pipe",
                f"--window-size={width},{height}", "about:blank"]
        self.pid = os.posix_spawn(executable, argv, dict(os.environ), file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_DUP2, high_in, 3),
            (os.POSIX_SPAWN_DUP2, high_out, 4),
        ])
        for fd in (to_child_r, from_child_w, high_in, high_out):
            os.close(fd)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None
        targets = self.call("Target.getTargets", browser=True)["targetInfos"]
        page = next((t for t in targets if t["type"] == "page"), None)
        target_id = page["targetId"] if page else self.call("Target.createTarget", url="about:blank",
                                                            browser=True)["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target_id, flatten=True,
                                 browser=True)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                  mobile=False)

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise CDPError("timed out waiting for chromium")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise CDPError("chromium closed the debugging pipe")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def call(self, method: str, timeout: float = 60.0, browser: bool = False, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if self.session is not None and not browser:
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str, timeout: float = 60.0) -> dict[str, Any]:
        for index, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(index)
        deadline = time.monotonic() + timeout
        while True:
            event = self._read_message(deadline)
            if event.get("method") == method:
                return event
            self.events.append(event)

    def navigate(self, url: str, timeout: float = 120.0) -> None:
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired", timeout=timeout)

    def eval(self, expression: str, timeout: float = 60.0) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True,
                           timeout=timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise CDPError(f"script error: {text}")
        return result["result"].get("value")

    def watch_long_tasks(self) -> None:
        """Record the durations of the page's long tasks (over 50 ms) from now on (for `measure`)."""
        self.eval("window.__longTasks = []; new PerformanceObserver(function (list) { list.getEntries().forEach("
                  "function (e) { window.__longTasks.push(e.duration); }); }).observe({type: 'longtask'}); 1")

    def measure(self, action: str, done: str | None = None, timeout: float = 120.0,
                settle: float = 0.3) -> dict[str, float]:
        """Run the JavaScript statements `action`, wait until the expression `done` is true (work the page
        does a frame at a time), then `settle` seconds: the time of the action's own task, the whole time,
        the longest task meanwhile (watch_long_tasks first; 0 when none passed 50 ms) and the elements."""
        self.eval("window.__longTasks.length = 0; 1")
        start = time.perf_counter()
        handler = self.eval("(function(){ const s = performance.now(); " + action + "; return performance.now() - s; })()")
        deadline = time.monotonic() + timeout
        while done is not None and not self.eval(done):
            if time.monotonic() > deadline:
                raise CDPError(f"timed out waiting for {done}")
            time.sleep(0.02)
        waited = time.perf_counter() - start
        time.sleep(settle)
        tasks = self.eval("window.__longTasks.slice()") or []
        return {"handler_ms": float(handler), "done_ms": waited * 1000, "longest_task_ms": float(max(tasks, default=0)),
                "elements": float(self.eval("document.getElementsByTagName('*').length"))}

    def screenshot(self, path: str, full_page: bool = False) -> None:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            metrics = self.call("Page.getLayoutMetrics")
            size = metrics.get("cssContentSize") or metrics["contentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 16000),
                              "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.call("Page.captureScreenshot", **params)["data"]
        with open(path, "wb") as handle:
            handle.write(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.call("Browser.close", browser=True, timeout=10)
        except (CDPError, OSError):
            pass
        deadline = time.monotonic() + 10
        while True:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                break
            time.sleep(0.05)
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
