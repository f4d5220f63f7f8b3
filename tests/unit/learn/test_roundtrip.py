"""Property: whatever the program touched, a learned line reads back as what was learned.

A recorded value either becomes a rule line that the real rule parser reads back to the same
path, name or host, or it is skipped with a warning — never written with another meaning.
"""

from __future__ import annotations

import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pysandboxes.learn.generalize import LAUNCHER_VARIABLES, LearnContext, generalize
from pysandboxes.learn.records import EnvAccess, FileAccess, NetAccess, Recording
from pysandboxes.learn.writer import merge_text, new_file_text
from pysandboxes.policy import parse_text

# Any character a file name may hold (no "/" and no NUL), the awkward ones made likely.
segment = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("#$'\" \t\\{}:-|,*?[]=~.\x01\x7f\udce9é漢")),
        st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)),
    ),
    min_size=1,
    max_size=12,
).filter(lambda s: s not in (".", ".."))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=segment,
    env_name=st.text(min_size=1, max_size=10),
    host=st.one_of(st.text(max_size=12), st.from_regex(r"[A-Za-z0-9.-]{1,20}\.?", fullmatch=True)),
)
def test_learned_values_read_back_unchanged_or_are_skipped(
    name: str, env_name: str, host: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.path.realpath(tmp)
        directory = os.path.join(cwd, name)
        os.mkdir(os.fsencode(directory))
        rec = Recording()
        rec.accesses[FileAccess(os.path.join(directory, "f.txt"), False)] = None
        rec.accesses[EnvAccess(env_name)] = None
        if host:
            rec.accesses[NetAccess("TCP", host, "", 443, "OUT")] = None
        ctx = LearnContext(cwd=cwd, home=None, host_tmp="/nonexistent-tmp", program_kind="code")
        learned = generalize(rec, ctx)
        written = {key for key, _ in learned.rules}
        text = new_file_text(learned, "subprocess")
        policy = parse_text(text, str(Path(cwd) / ".py-sandboxes"), environ={}, cwd=cwd)
        if "expose-ro" in written:
            assert [r.path for r in policy.expose_ro] == [os.path.realpath(directory)]
        else:  # skipped, or left for review (a name such as "id_x" or "x.key" looks secret)
            assert any(
                "skipped expose-ro" in w or "looks like a place that holds credentials" in w
                for w in learned.warnings
            )
        if "env" in written:
            assert [r.name for r in policy.env] == [env_name]
        elif env_name not in LAUNCHER_VARIABLES:  # TMPDIR, TEMP, TMP: never learned
            assert any(env_name in w or repr(env_name) in w for w in learned.warnings)
        if host and "net" in written:
            assert [r.host for r in policy.net] == [host.lower().removesuffix(".")]
        # The same lines appended to an existing file read back the same way.
        merged = merge_text("# mine\npy-sandbox=true\n", learned, datetime.now(UTC))
        again = parse_text(merged, str(Path(cwd) / ".py-sandboxes"), environ={}, cwd=cwd)
        assert [r.path for r in again.expose_ro] == [r.path for r in policy.expose_ro]
        assert all(r.origin.learned for r in again.expose_ro + again.env + again.net)
