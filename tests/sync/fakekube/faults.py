"""Trouble the fake API server can be told to make, each consumed as it happens."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class Faults:
    """Counters of injected failures; thread-safe, each unit used once."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    status_codes: list[int] = field(default_factory=list)
    status_watch_only: bool = False
    refused: int = 0
    drop_watch_after: int | None = None
    drop_plural: str = ""
    hang_watches: int = 0
    hang_plural: str = ""
    watches_down: str | None = None  # path fragment; "" blocks every watch
    garbled_lists: str | None = None  # path fragment of the next list answered garbage

    def fail_next(self, count: int, status: int = 503, *, watch_only: bool = False) -> None:
        """The next `count` requests (or watch requests) answer `status`."""
        with self.lock:
            self.status_codes += [status] * count
            self.status_watch_only = watch_only

    def refuse_next(self, count: int) -> None:
        """The next `count` requests get their connection closed without an answer."""
        with self.lock:
            self.refused += count

    def drop_next_watch(self, after_events: int, plural: str = "") -> None:
        """The next watch (of `plural`) is cut mid-stream after that many events."""
        with self.lock:
            self.drop_watch_after, self.drop_plural = after_events, plural

    def hang_next_watches(self, count: int, plural: str = "") -> None:
        """The next watches (of `plural`) send headers, then nothing, ignoring timeoutSeconds."""
        with self.lock:
            self.hang_watches, self.hang_plural = count, plural

    def watches_fail(self, path_fragment: str = "") -> None:
        """Every watch request (whose path holds the fragment) answers 503 until restored."""
        with self.lock:
            self.watches_down = path_fragment

    def garble_next_list(self, path_fragment: str) -> None:
        """The next list (not watch) whose path holds the fragment answers 200 with a body
        that is not JSON (a proxy's error page, say)."""
        with self.lock:
            self.garbled_lists = path_fragment

    def take_garbled(self, is_watch: bool, path: str) -> bool:
        with self.lock:
            if is_watch or self.garbled_lists is None or self.garbled_lists not in path:
                return False
            self.garbled_lists = None
            return True

    def watches_work(self) -> None:
        with self.lock:
            self.watches_down = None

    def take_status(self, is_watch: bool, path: str = "") -> int | None:
        with self.lock:
            if is_watch and self.watches_down is not None and self.watches_down in path:
                return 503
            if self.status_codes and (is_watch or not self.status_watch_only):
                return self.status_codes.pop(0)
            return None

    def take_refusal(self) -> bool:
        with self.lock:
            if self.refused:
                self.refused -= 1
                return True
            return False

    def take_drop(self, plural: str) -> int | None:
        with self.lock:
            if self.drop_watch_after is None or self.drop_plural not in ("", plural):
                return None
            after, self.drop_watch_after = self.drop_watch_after, None
            return after

    def take_hang(self, plural: str) -> bool:
        with self.lock:
            if self.hang_watches and self.hang_plural in ("", plural):
                self.hang_watches -= 1
                return True
            return False
