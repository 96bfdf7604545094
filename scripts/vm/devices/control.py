"""A control FIFO shared by the device programs: commands arrive one a line while the device runs.

The FIFO is created when missing and opened read-write, so a writer always exists and it never reads
as end-of-file between commands; reads do not block.
"""
import os


class ControlFifo:
    def __init__(self, path):
        if not os.path.exists(path):
            os.mkfifo(path, 0o600)
        self.fd = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        self._pending = b""

    @classmethod
    def open(cls, path):
        """The FIFO at `path`, or None when no path was given."""
        return cls(path) if path else None

    def lines(self):
        """The complete, non-empty lines that arrived since the last call, stripped."""
        try:
            self._pending += os.read(self.fd, 65536)
        except BlockingIOError:
            return []
        out = []
        while b"\n" in self._pending:
            line, self._pending = self._pending.split(b"\n", 1)
            line = line.decode(errors="replace").strip()
            if line:
                out.append(line)
        return out
