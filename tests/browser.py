"""Headless Chromium driven through the DevTools protocol (--remote-debugging-pipe), for the tests that open a
report as a reader would (tests/test_reports_browser.py): without Chromium they skip and say why (`make chromium`
installs it). Every test using it carries @pytest.mark.browser (tests/conftest.py enforces it)."""
from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--remote-debugging-pipe"]


class Browser:
    """Chromium driven through the DevTools protocol on fds 3 (commands in) and 4 (replies out), messages
    separated by NUL bytes; no websocket library needed."""

    def __init__(self, exe: str, profile: Path):
        cin_r, self._w = os.pipe()
        self._r, cout_w = os.pipe()

        def fds():  # in the child: the pipe ends to fds 3 and 4, through high fds so neither clobbers the other
            os.dup2(cin_r, 100)
            os.dup2(cout_w, 101)
            os.dup2(100, 3)
            os.dup2(101, 4)
            os.close(100)
            os.close(101)

        self.proc = subprocess.Popen([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=open(profile.parent / "chromium.log", "w"),
                                     close_fds=False, preexec_fn=fds, start_new_session=True)
        os.close(cin_r)
        os.close(cout_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []
        self.log = profile.parent / "chromium.log"

    def _recv(self, timeout: float) -> dict | None:
        end = time.time() + timeout
        while b"\0" not in self._buf:
            left = end - time.time()
            if left <= 0:
                return None
            if not select.select([self._r], [], [], min(left, 0.5))[0]:
                if self.proc.poll() is not None:
                    return None      # the browser is gone
                continue
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                return None
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30.0):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        end = time.time() + timeout
        while time.time() < end:
            m = self._recv(end - time.time())
            if m is None:
                break
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m["result"]
            self.events.append(m)
        if self.proc.poll() is not None:
            raise RuntimeError(f"{method}: the browser exited with status {self.proc.returncode}")
        raise TimeoutError(f"{method}: no reply in {timeout} s")

    def wait_event(self, method: str, timeout: float = 30.0) -> dict:
        for e in self.events:
            if e.get("method") == method:
                return e
        end = time.time() + timeout
        while time.time() < end:
            m = self._recv(end - time.time())
            if m is None:
                break
            self.events.append(m)
            if m.get("method") == method:
                return m
        raise TimeoutError(f"no {method} in {timeout} s")

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:  # noqa: BLE001 - best effort, the process is ended below anyway
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
        os.close(self._w)
        os.close(self._r)


def chromium_exe() -> str:
    exe = os.environ.get("H5DLIO_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        pytest.skip("chromium not installed: `make chromium` installs Debian's chromium for this test")
    return exe


def open_in_chromium(page: Path, tmp: Path, exe: str) -> dict:
    """load the page in Chromium `exe` (the `chromium` fixture), then: images (count, broken), console errors,
    requests, a PNG screenshot"""
    try:
        b = Browser(exe, tmp / "profile")
    except OSError as e:
        pytest.skip(f"chromium cannot start here: {e}")
    try:
        try:
            target = b.call("Target.createTarget", {"url": "about:blank"}, timeout=60)
        except (TimeoutError, RuntimeError, OSError) as e:
            pytest.skip(f"chromium cannot run here ({e}); its log: {b.log.read_text()[-800:]}")
        sid = b.call("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})["sessionId"]
        for m in ("Runtime.enable", "Log.enable", "Page.enable", "Network.enable"):
            b.call(m, session=sid)
        b.call("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 1000, "deviceScaleFactor": 1,
                                                      "mobile": False}, session=sid)
        b.call("Page.navigate", {"url": page.as_uri()}, session=sid)
        b.wait_event("Page.loadEventFired", timeout=60)
        time.sleep(0.5)       # late console messages
        js = ("JSON.stringify({n: document.images.length, broken: Array.from(document.images).filter(i => "
              "!i.complete || i.naturalWidth === 0).map(i => i.alt), widths: Array.from(document.images).map("
              "i => i.naturalWidth), height: document.body.scrollHeight, text: document.body.innerText.length})")
        state = json.loads(b.call("Runtime.evaluate", {"expression": js, "returnByValue": True},
                                  session=sid)["result"]["value"])
        shot = base64.b64decode(b.call("Page.captureScreenshot", {"format": "png"}, session=sid)["data"])
        js = ("JSON.stringify(Array.from(document.images).map(i => {const r = i.getBoundingClientRect(); "
              "return {x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height};}))")
        rects = json.loads(b.call("Runtime.evaluate", {"expression": js, "returnByValue": True},
                                  session=sid)["result"]["value"])
        figs = [base64.b64decode(b.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                                   "clip": {**r, "scale": 1}}, session=sid)["data"])
                for r in rects]
        ev = [e for e in b.events if e.get("sessionId") == sid]
        errors = [e["params"] for e in ev if e.get("method") == "Runtime.exceptionThrown"]
        errors += [e["params"] for e in ev if e.get("method") == "Runtime.consoleAPICalled"
                   and e["params"].get("type") in ("error", "assert")]
        errors += [e["params"]["entry"] for e in ev if e.get("method") == "Log.entryAdded"
                   and e["params"]["entry"].get("level") == "error"]
        requests = [e["params"]["request"]["url"] for e in ev if e.get("method") == "Network.requestWillBeSent"]
        return {**state, "errors": errors, "requests": requests, "shot": shot, "figures": figs}
    finally:
        b.close()
