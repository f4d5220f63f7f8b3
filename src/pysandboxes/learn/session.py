"""The supervising side of learning and audit mode (SPEC §4).

In ``learn`` and ``audit`` mode ``python-sb`` stays as the parent of the sandboxed interpreter.
The launcher creates one :class:`LearningSession`, passes :meth:`LearningSession.child_fd` to
the child as ``RunContext.record_fd``, calls :meth:`~LearningSession.start` once the child is
spawned and :meth:`~LearningSession.finish` exactly once when it is over, whatever ended it.

The records live in this process as soon as they are read, so a child that crashes, is killed
by SIGTERM or even SIGKILL loses nothing it had reported. A reader thread empties the pipe as the
child writes, so a child that records a lot never blocks on a full pipe.

At the end:

- ``learn``: the accesses are generalised (:mod:`pysandboxes.learn.generalize`) and written to
  the output rule file (:mod:`pysandboxes.learn.writer`): a new file from the template, or a
  dated block appended to the existing one after a backup. Nothing new, nothing written.
- ``audit``: nothing is written to any rule file; every access the rules would refuse is listed
  once on stderr with the line that would allow it, and appended as JSON lines to ``--denials``.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Literal, TextIO

from pysandboxes.errors import ConfigError, Denial
from pysandboxes.learn.children import ChildObserver
from pysandboxes.learn.generalize import LearnContext, Learned, generalize
from pysandboxes.learn.records import ApiAccess, EnvAccess, EnvScan, ImportListing, Recording
from pysandboxes.policy.model import RULE_FIELDS, Policy

__all__ = ["LearningSession"]

_PREFIX = "python-sb"
_READ_SIZE = 1 << 16


def _supplied(origin: object) -> bool:
    """Whether a rule comes from the launcher rather than a file (origin ``<...>``)."""

    file = getattr(origin, "file", None)
    return isinstance(file, str) and file.startswith("<")


class LearningSession:
    """Records what the sandboxed program does; writes rules or an audit report at the end.

    ``output`` is the rule file learning writes to (``learn`` mode; ``None``: the policy's main
    file, else ``./.py-sandboxes``). ``tmpdir`` (the private temp directory) and ``prefixes``
    (the interpreter's installation) are what the defaults already grant; ``environ`` is the
    environment of ``python-sb`` (``HOME``, ``VIRTUAL_ENV``, ``TMPDIR`` for the written forms).
    """

    def __init__(
        self,
        policy: Policy,
        *,
        mode: Literal["learn", "audit"],
        output: str | None,
        cwd: str,
        program_kind: str,
        program: str | None,
        denials_file: str | None,
        tmpdir: str | None = None,
        prefixes: Sequence[str] = (),
        environ: Mapping[str, str] | None = None,
        stderr: TextIO | None = None,
        write: bool = True,
    ) -> None:
        if mode not in ("learn", "audit"):
            raise ValueError(f"LearningSession mode must be 'learn' or 'audit', not {mode!r}")
        self.policy = policy
        self.mode = mode
        self.cwd = cwd
        self.program_kind = program_kind
        self.program = program
        self.denials_file = denials_file
        self.tmpdir = tmpdir
        self.prefixes = tuple(prefixes)
        self.environ = dict(os.environ if environ is None else environ)
        self._stderr = stderr
        #: ``False``: learn without writing (an interactive session no rule file or --learn
        #: asked to keep: it is not a program to profile, and a file must not appear silently).
        self.write = write
        self.output = self._output_path(output) if mode == "learn" else None
        self._denials_offset = _size(denials_file)
        self.recording = Recording()
        self._read_fd, self._write_fd = os.pipe()
        os.set_inheritable(self._write_fd, True)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._finished = False
        self.written: str | None = None
        self.backup: str | None = None
        self.learned: Learned | None = None
        self.children = _child_observer(mode, tmpdir, self.environ)
        self._announce()

    # -- the launcher's interface ----------------------------------------------------------------

    def child_fd(self) -> int:
        """The inheritable write end the child receives as ``RunContext.record_fd``."""

        return self._write_fd

    def start(self) -> None:
        """After the child is spawned: drop the parent's write end, start reading."""

        self._close_write_end()
        if self.children is not None:
            self.children.start()
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._read_loop, name="python-sb-learning", daemon=True
            )
            self._thread.start()

    def finish(self, status: int | None) -> None:
        """Once, on every exit path: collect the last records, then write rules or report.

        Never raises for a problem with the output: it is said on stderr, and in learning mode
        the learned lines are printed there too, so that nothing recorded is lost.
        """

        if self._finished:
            return
        self._finished = True
        with _signals_held():
            self._close_write_end()
            self._collect()
            if self.children is not None:
                self.children.stop()
                self.recording.extend(self.children.records())
            try:
                if self.mode == "learn":
                    self._finish_learning(status)
                else:
                    self._finish_audit()
            except Exception as exc:  # the program's status must survive a reporting problem
                self._say(f"{self._label()}: could not complete: {type(exc).__name__}: {exc}")

    # -- reading ---------------------------------------------------------------------------------

    def _close_write_end(self) -> None:
        if self._write_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._write_fd)
            self._write_fd = -1

    def _read_loop(self) -> None:
        """Read until end of file, or until :meth:`finish` says the child is gone and the pipe
        is empty (a grandchild that inherited the write end must not hold the parent up)."""

        wait = _pipe_waiter(self._read_fd)
        try:
            while True:
                if not wait(0.1):
                    if self._stop.is_set():
                        return
                    continue
                try:
                    chunk = os.read(self._read_fd, _READ_SIZE)
                except InterruptedError:
                    continue
                except OSError:
                    return
                if not chunk:
                    return
                self.recording.feed(chunk)
        finally:
            wait(None)  # releases the waiter

    def _collect(self) -> None:
        """Stop the reader (it drains what is buffered first), then read any rest here."""

        self._stop.set()
        if self._thread is not None:
            # Windows: a reader blocked on a pipe a grandchild still holds open is left behind
            # after a while (its records are lost; POSIX readers stop at _stop, above).
            self._thread.join(None if sys.platform != "win32" else 5.0)
        if sys.platform == "win32":  # pipes are not selectable: the reader read to the end
            self.recording.close()
            with contextlib.suppress(OSError):
                os.close(self._read_fd)
            self._read_fd = -1
            return
        os.set_blocking(self._read_fd, False)
        while True:
            try:
                chunk = os.read(self._read_fd, _READ_SIZE)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                break
            if not chunk:
                break
            self.recording.feed(chunk)
        self.recording.close()
        with contextlib.suppress(OSError):
            os.close(self._read_fd)
        self._read_fd = -1

    # -- learning --------------------------------------------------------------------------------

    def _output_path(self, output: str | None) -> str:
        if output:
            path = output
        elif self.policy.learn.value:
            path = str(self.policy.learn.value)
        elif self.policy.main_file:
            path = self.policy.main_file
        else:
            path = ".py-sandboxes"
        path = os.path.expanduser(path) if path.startswith("~") else path
        return os.path.normpath(os.path.join(self.cwd, path))

    def _existing_rules(self, path: str) -> Policy | None:
        """The rules the output file itself holds (its includes excluded), or ``None``."""

        # Rules the launcher adds for its own use, whose origin is no file ("<kernel FILE>": the
        # connection file of a Jupyter kernel, integrations/kernel.py) count as granted: what
        # they grant is the launcher's business, never learned into the rule file.
        supplied = {
            name: tuple(rule for rule in getattr(self.policy, name) if _supplied(rule.origin))
            for name in RULE_FIELDS
        }
        if not os.path.exists(path):
            return self.policy.replace(**supplied) if any(supplied.values()) else None
        from pysandboxes.policy import load_policy

        loaded = load_policy(path, environ=self.environ, cwd=self.cwd, learned_ok=True)
        real = os.path.realpath(path)

        def own(origin: object) -> bool:
            file = getattr(origin, "file", None)
            return file is not None and os.path.realpath(file) == real

        kept = {
            name: (*(rule for rule in getattr(loaded, name) if own(rule.origin)), *supplied[name])
            for name in RULE_FIELDS
        }
        return loaded.replace(**kept)

    def _finish_learning(self, status: int | None) -> None:
        from pysandboxes.learn.writer import write_learned

        assert self.output is not None
        try:
            existing = self._existing_rules(self.output)
        except ConfigError as exc:
            learned = self._generalize(None)
            self._say(f"{self._label()}: {self._shown(self.output)} cannot be read as rules:")
            self._say(str(exc))
            self._give_back(learned, "it was not changed; the learned rules are:")
            return
        learned = self._generalize(existing, _read_text(self.output))
        if not self.write:
            count = len(learned.rules)
            self._say(
                f"{self._label()}: interactive session: {count} rule line"
                f"{'s' if count != 1 else ''} learned, none written (no rule file was asked "
                "for: python-sb --learn=FILE keeps them)"
            )
            return
        for warning in learned.warnings:
            self._say(f"{self._label()}: {warning}")
        if learned.empty:
            if existing is None:
                self._say(
                    f"{self._label()}: nothing to learn from this run; no rule file written "
                    f"({self._shown(self.output)} does not exist)"
                )
            else:
                self._say(
                    f"{self._label()}: nothing new to add; {self._shown(self.output)} unchanged"
                )
            return
        try:
            self.written, self.backup = write_learned(self.output, learned, source=self._source())
        except (OSError, ValueError) as exc:
            self._say(f"{self._label()}: cannot write {self._shown(self.output)}: {exc}")
            self._give_back(learned, "the learned rules are:")
            return
        count = len(learned.rules)
        where = self._shown(self.written)
        saved = f" (previous version saved as {self._shown(self.backup)})" if self.backup else ""
        ended = "" if status in (0, None) else f" (the program ended with status {status})"
        reviews = len(learned.reviews)
        to_review = (
            f" and {reviews} commented-out line{'s' if reviews != 1 else ''} to review"
            if reviews
            else ""
        )
        self._say(
            f"{self._label()}: wrote {count} rule line{'s' if count != 1 else ''}{to_review} to "
            f"{where}{saved}{ended}. They grant what this run did: review them before relying "
            "on them."
        )

    def _generalize(self, existing: Policy | None, existing_text: str = "") -> Learned:
        ctx = LearnContext.for_run(
            existing_text=existing_text,
            cwd=self.cwd,
            program_kind=self.program_kind,
            program=self.program,
            private_tmp=self.tmpdir,
            prefixes=self.prefixes,
            environ=self.environ,
            existing=existing,
            output=self.output,
        )
        self.learned = generalize(self.recording, ctx)
        if self.children is not None:
            _report_children(self.children, self.recording, self.learned)
        return self.learned

    def _give_back(self, learned: Learned, intro: str) -> None:
        self._say(f"{self._label()}: {intro}")
        for section in learned.sections.values():
            for line in section:
                self._say(line)

    def _source(self) -> str:
        if self.program_kind == "script" and self.program:
            return os.path.basename(self.program)
        if self.program_kind == "module" and self.program:
            return f"-m {self.program}"
        return {"code": "-c", "stdin": "stdin", "repl": "interactive session"}.get(
            self.program_kind, self.program_kind
        )

    # -- audit -----------------------------------------------------------------------------------

    def _audit_context(self) -> LearnContext:
        """The run's context for the decisions audit shares with learning, against the rules
        in force (includes too: audit judges what this run would be refused)."""

        return LearnContext.for_run(
            cwd=self.cwd,
            program_kind=self.program_kind,
            program=self.program,
            private_tmp=self.tmpdir,
            prefixes=self.prefixes,
            environ=self.environ,
            existing=self.policy,
        )

    def _finish_audit(self) -> None:
        from pysandboxes.learn.generalize import listing_needed

        ctx = self._audit_context()
        denials = [
            denial
            for denial, access in self.recording.denials.values()
            if not isinstance(access, ImportListing) or listing_needed(access, self.recording)
        ]
        denials = [self._secret_file(denial, ctx) for denial in denials]
        denials += self._program_denials(ctx, {d.target for d in denials if d.kind == "file"})
        denials += self._env_denials(ctx, {d.target for d in denials if d.kind == "env"})
        if not denials:
            self._say(f"{self._label()}: no access outside the rules in this run")
        else:
            count = len(denials)
            self._say(
                f"{self._label()}: {count} access{'es' if count != 1 else ''} the rules would "
                "refuse (nothing was refused in this run):"
            )
            for denial in denials:
                for line in describe(denial):
                    self._say("  " + line)
        if self.recording.of_type(EnvScan):
            from pysandboxes.learn.generalize import SCAN_NOTE

            for line in SCAN_NOTE:
                self._say(f"{self._label()}: {line.removeprefix('# ')}")
        if self.denials_file and denials:
            self._append_denials(denials)

    @staticmethod
    def _secret_file(denial: Denial, ctx: LearnContext) -> Denial:
        """A file access whose rule learning would leave for review says so (the same
        decision: ``generalize.file_grant_looks_secret``)."""

        from pysandboxes.learn.generalize import file_grant_looks_secret

        if denial.kind != "file" or not denial.target.startswith("/"):
            return denial
        write = (denial.detail or "").startswith("write")
        if not file_grant_looks_secret(denial.target, write, ctx):
            return denial
        return Denial(
            kind=denial.kind,
            target=denial.target,
            rule=denial.rule,
            origin=denial.origin,
            suggestion=denial.suggestion,
            detail=f"{denial.detail or ''}; looks like a secret: review before granting it",
        )

    def _program_denials(self, ctx: LearnContext, known: set[str]) -> list[Denial]:
        """The directory a kernel provider must let the interpreter read to start the program
        at all (the script's, or the ``-m`` package's ``sys.path`` entry), when the rules do not
        expose it: learning writes that line (``generalize.program_needs``), audit reports it."""

        from pysandboxes.learn.generalize import program_needs

        out: list[Denial] = []
        for directory in program_needs(ctx):
            if directory in known:
                continue
            out.append(
                Denial(
                    kind="file",
                    target=directory,
                    rule=None,
                    origin=None,
                    suggestion=f"expose-ro={directory}",
                    detail="read: the program's own directory, which a kernel provider must "
                    "expose for the interpreter to start the program",
                )
            )
        return out

    def _env_denials(self, ctx: LearnContext, known: set[str]) -> list[Denial]:
        """Variables the program read, set in python-sb's environment, that the rules do not
        pass (the guard does not judge the environment: the launcher builds it, SPEC §3.4)."""

        from pysandboxes.learn import generalize as g

        out: list[Denial] = []
        for access in self.recording.of_type(EnvAccess):
            name = access.name
            if name in known:
                continue
            known.add(name)
            # The same decision as learning's (generalize.env_verdict), against these rules.
            verdict, why = g.env_verdict(name, ctx)
            if verdict in (g.ENV_NEEDS_NOTHING, g.ENV_UNSET, g.ENV_BAD_NAME):
                continue  # an unset variable: withholding it changes nothing
            detail = "read by the program, not passed to it by the rules"
            if verdict in (g.ENV_SECRET, g.ENV_INTERPRETER):
                detail += f"; {why}"
            unset = next((r for r in self.policy.unenv if fnmatch.fnmatchcase(name, r.name)), None)
            out.append(
                Denial(
                    kind="env",
                    target=name,
                    rule=unset.text if unset else None,
                    origin=str(unset.origin) if unset else None,
                    suggestion=None if unset else f"env={name}=${{{name}}}",
                    detail=detail,
                )
            )
        return out

    def _append_denials(self, denials: list[Denial]) -> None:
        """Append each denial once: the guard may already have appended some in this run."""

        assert self.denials_file is not None
        present: set[tuple[object, ...]] = set()
        try:
            with open(self.denials_file, "rb") as handle:
                handle.seek(self._denials_offset)
                for raw in handle:
                    try:
                        data = json.loads(raw)
                    except ValueError:
                        continue
                    if isinstance(data, dict):
                        present.add(
                            (
                                data.get("kind"),
                                data.get("target"),
                                data.get("rule"),
                                _first_part(data.get("detail")),
                            )
                        )
        except OSError:
            pass
        try:
            with open(self.denials_file, "a", encoding="utf-8") as handle:
                for denial in denials:
                    key = (denial.kind, denial.target, denial.rule, _first_part(denial.detail))
                    if key not in present:
                        handle.write(json.dumps(denial.to_dict(), sort_keys=True) + "\n")
        except OSError as exc:
            self._say(f"{self._label()}: cannot append to {self.denials_file}: {exc}")

    # -- output ----------------------------------------------------------------------------------

    def _label(self) -> str:
        return f"{_PREFIX} --learn" if self.mode == "learn" else f"{_PREFIX} --audit"

    def _announce(self) -> None:
        if self.mode == "learn":
            assert self.output is not None
            if self.policy.os_sandbox.value == "qemu":  # learning runs in the VM (qemu.py)
                where = (
                    "in a disposable VM, os-sandbox=qemu, that holds only the exposed paths "
                    "and keeps nothing else it writes"
                )
                advice = "The VM, not the rules, keeps the program from the rest of this machine."
            else:
                where, advice = "no kernel sandbox", "Use it on trusted code only."
            goes = (
                f"Rules go to {self._shown(self.output)} at exit."
                if self.write
                else "No rule file: nothing is written at exit (--learn=FILE writes one)."
            )
            self._say(
                f"{self._label()}: LEARNING MODE: this run grants whatever the program does "
                f"(the Python layer records instead of refusing, {where}). {goes} {advice}"
            )
        else:
            self._say(
                f"{self._label()}: nothing is enforced in this run; what the rules would refuse "
                "is reported at exit."
            )

    def _shown(self, path: str | None) -> str:
        from pysandboxes.policy.model import display_path

        return display_path(path) if path else "?"

    def _say(self, text: str) -> None:
        stream = self._stderr if self._stderr is not None else sys.stderr
        try:
            stream.write(text + "\n")
            stream.flush()
        except (OSError, ValueError):
            pass


def _child_observer(
    mode: str, tmpdir: str | None, environ: Mapping[str, str]
) -> ChildObserver | None:
    """The observer of child processes (learning mode only: ``pysandboxes.learn.children``)."""

    return ChildObserver(tmpdir, environ) if mode == "learn" else None


def _report_children(observer: ChildObserver, recording: Recording, learned: Learned) -> None:
    """What the observation of child processes could not learn: warnings (stderr), and the same
    as comments in the learned file when children ran unobserved."""

    from pysandboxes.learn.children import not_learned_lines, observed_lines

    functions = [a.function for a in recording.of_type(ApiAccess) if a.category == "process-exec"]
    missing = not_learned_lines(observer, functions)
    if missing:
        learned.warnings.append(" ".join(missing))
        for line in missing:
            learned.note("files", line)
    learned.warnings.extend(observed_lines(observer))


def describe(denial: Denial) -> list[str]:
    """An audit entry: the access, why it would be refused, the line that would allow it."""

    head = f"{denial.kind} {denial.target}"
    if denial.detail:
        head += f" ({denial.detail})"
    if denial.rule:
        where = f" from {denial.origin}" if denial.origin else ""
        reason = f"refused by '{denial.rule}'{where}"
    else:
        reason = "no rule allows it"
    lines = [f"{head}: {reason}"]
    if denial.suggestion:
        lines.append(f"    to allow it: {denial.suggestion}")
    else:
        lines.append("    no rule line can allow it (a net= DENY wins over any ALLOW)")
    return lines


def _first_part(detail: object) -> object:
    """A denial's detail up to the notes audit adds after ``;`` (the guard appended the same
    access without them)."""

    return detail.split(";", 1)[0] if isinstance(detail, str) else detail


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


def _size(path: str | None) -> int:
    try:
        return os.path.getsize(path) if path else 0
    except OSError:
        return 0


def _pipe_waiter(fd: int) -> Callable[[float | None], bool]:
    """``wait(timeout)``: whether the pipe ``fd`` has data or is closed, waiting at most
    ``timeout`` seconds; ``wait(None)`` releases what it holds. The platform's best selector
    (``selectors.DefaultSelector``: epoll, kqueue on macOS, where ``poll`` refuses some
    descriptors); on Windows, where ``select`` takes sockets only, it answers ``True`` at
    once and the reader blocks in ``read`` until end of file, which the last write end's close
    gives (``finish`` closes the parent's own end first)."""

    if sys.platform == "win32":
        return lambda timeout: True
    import selectors

    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)

    def wait(timeout: float | None) -> bool:
        if timeout is None:
            selector.close()
            return False
        try:
            return bool(selector.select(timeout))
        except InterruptedError:
            return False

    return wait


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT/SIGTERM/SIGHUP while the rules are written (main thread only): a second
    Ctrl-C must not cut the write short; the signal is delivered right after. Where signals
    cannot be blocked (Windows: no ``pthread_sigmask``), SIGINT is ignored for the duration
    and its handler put back (a Ctrl-C then is lost rather than cutting the write short)."""

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if sys.platform == "win32" or not hasattr(signal, "pthread_sigmask"):
        previous_handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous_handler)
        return
    held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
