"""Issue 11, file-system half: one meaning per file rule under every kernel provider.

Each test runs the same program through the real ``python-sb`` under ``landlock``, ``bwrap``
and ``unshare``, with the Python layer off and on, and the same program under plain python3 as
the control (it must succeed there, so a refusal in the sandbox is the sandbox's doing).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pysandboxes.providers import limits
from tests.helpers import base_env, require, run_python, run_sb

PROVIDERS = ("landlock", "bwrap", "unshare")
CASES = [(p, py) for p in PROVIDERS for py in ("false", "true")]


def provider_ok(name: str) -> None:
    from pysandboxes.providers import get_provider

    state = get_provider(name).availability()
    require(state.ok, f"os-sandbox={name}: {state.reason} ({state.install_hint})")


def rules(tmp_path: Path, provider: str, py: str, *lines: str) -> dict[str, str]:
    """Write the rule file in ``tmp_path`` (the cwd); the environment to run with."""

    text = "\n".join([f"os-sandbox={provider}", f"py-sandbox={py}", "python-import=*", *lines])
    (tmp_path / ".py-sandboxes").write_text(text + "\n")
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return base_env(home)


@pytest.mark.parametrize(("provider", "py"), CASES)
def test_read_only_below_read_write_is_not_writable(tmp_path: Path, provider: str, py: str) -> None:
    """Point 1 (a directory and a single file below an expose-rw)."""

    provider_ok(provider)
    proj = tmp_path / "proj"
    (proj / "ro").mkdir(parents=True)
    (proj / "ro" / "f").write_text("orig")
    (proj / "keep.cfg").write_text("orig")
    (proj / "notes.txt").write_text("orig")
    (proj / "src").mkdir()
    program = (
        "import errno\n"
        "for path in ('proj/ro/f', 'proj/keep.cfg', 'proj/notes.txt', 'proj/src/new.py'):\n"
        "    try:\n"
        "        with open(path, 'a') as handle:\n"
        "            handle.write('x')\n"
        "        print(path, 'written')\n"
        "    except OSError as exc:\n"
        "        print(path, errno.errorcode[exc.errno])\n"
    )
    control = run_python(["-c", program], cwd=tmp_path)
    assert control.returncode == 0 and "proj/ro/f written" in control.stdout
    for name in ("ro/f", "keep.cfg", "notes.txt"):
        (proj / name).write_text("orig")
    (proj / "src" / "new.py").unlink()
    env = rules(tmp_path, provider, py, "expose-rw=./proj", "expose-ro=./proj/ro",
                "expose-ro=./proj/keep.cfg")  # fmt: skip
    result = run_sb(["-c", program], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines["proj/ro/f"] in ("EACCES", "EPERM", "EROFS"), result.stdout
    assert lines["proj/keep.cfg"] in ("EACCES", "EPERM", "EROFS"), result.stdout
    assert (proj / "ro" / "f").read_text() == "orig"
    assert (proj / "keep.cfg").read_text() == "orig"
    # The rest of the writable directory stays writable.
    assert lines["proj/notes.txt"] == "written" and lines["proj/src/new.py"] == "written"
    if provider == "landlock":  # the price of the split is said at start
        assert "lies below 'expose-rw=./proj'" in result.stderr


@pytest.mark.parametrize(("provider", "py"), CASES)
def test_private_keys_are_not_readable(tmp_path: Path, provider: str, py: str) -> None:
    """Point 2: certificate stores only, never /etc/ssl/private."""

    provider_ok(provider)
    require(os.path.isdir("/etc/ssl/private"), "no /etc/ssl/private on this machine")
    program = (
        "import os, ssl\n"
        "ssl.create_default_context()\n"
        "try:\n"
        "    os.listdir('/etc/ssl/private')\n"
        "    print('listed')\n"
        "except OSError as exc:\n"
        "    print('refused', type(exc).__name__)\n"
    )
    control = run_python(["-c", program], cwd=tmp_path)
    require(control.stdout.strip() == "listed", "this user cannot list /etc/ssl/private anyway")
    result = run_sb(["-c", program], cwd=tmp_path, env=rules(tmp_path, provider, py))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("refused"), result.stdout


@pytest.mark.parametrize(("provider", "py"), CASES)
def test_default_data_files_read_alike(tmp_path: Path, provider: str, py: str) -> None:
    """Point 4: mime.types, os-release, time zones read the same as under plain python3."""

    provider_ok(provider)
    require(os.path.exists("/etc/mime.types"), "no /etc/mime.types on this machine")
    program = (
        "import mimetypes, platform, zoneinfo\n"
        "print(len(open('/etc/mime.types').read()))\n"
        "print(mimetypes.guess_type('x.webm'))\n"
        "print(platform.freedesktop_os_release().get('ID'))\n"
        "print(zoneinfo.ZoneInfo('Europe/Paris').key)\n"
    )
    control = run_python(["-c", program], cwd=tmp_path)
    assert control.returncode == 0, control.stderr
    result = run_sb(["-c", program], cwd=tmp_path, env=rules(tmp_path, provider, py))
    assert result.returncode == 0, result.stderr
    assert result.stdout == control.stdout


@pytest.mark.parametrize(("provider", "py"), CASES)
@pytest.mark.parametrize("name", ["/etc/hosts", "/etc/passwd", "/etc/group"])
def test_exposing_generated_etc_files_runs(
    tmp_path: Path, provider: str, py: str, name: str
) -> None:
    """Point 6: expose-ro=/etc/hosts, /etc/passwd, /etc/group (as learning writes them)."""

    provider_ok(provider)
    program = f"print(open({name!r}).read().splitlines()[0])"
    control = run_python(["-c", program], cwd=tmp_path)
    assert control.returncode == 0
    env = rules(tmp_path, provider, py, f"expose-ro={name}")
    result = run_sb(["-c", program], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    if name != "/etc/hosts":  # the host's accounts file replaces the generated one
        assert result.stdout == control.stdout
    else:  # python-sb's entries first, then the host's
        host = [line for line in Path(name).read_text().splitlines() if line.split()[1:]]
        assert result.stdout.strip() in host or "localhost" in result.stdout


@pytest.mark.parametrize(("provider", "py"), CASES)
def test_exposure_through_a_symbolic_link_keeps_its_name(
    tmp_path: Path, provider: str, py: str
) -> None:
    """Point 7: ``expose-ro=~/project`` where ~/project -> elsewhere, and /var/run -> /run."""

    provider_ok(provider)
    real = tmp_path / "elsewhere" / "project"
    real.mkdir(parents=True)
    (real / "data.txt").write_text("data")
    env = rules(tmp_path, provider, py, "expose-ro=~/project")
    link = Path(env["HOME"]) / "project"
    link.symlink_to(real)
    program = f"print(open({str(link / 'data.txt')!r}).read())"
    control = run_python(["-c", program], cwd=tmp_path)
    assert control.stdout == "data\n"
    result = run_sb(["-c", program], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "data\n"


def test_refusal_through_a_symbolic_link_suggests_a_rule_that_helps(tmp_path: Path) -> None:
    """Point 7: the Python layer names the path as written, and that rule then works under
    bwrap."""

    provider_ok("bwrap")
    real = tmp_path / "elsewhere"
    real.mkdir()
    (real / "data.txt").write_text("data")
    (tmp_path / "link").symlink_to(real)
    program = f"print(open({str(tmp_path / 'link' / 'data.txt')!r}).read())"
    env = rules(tmp_path, "bwrap", "true")
    refused = run_sb(["-c", program], cwd=tmp_path, env=env)
    assert refused.returncode == 1
    suggested = f"expose-ro={tmp_path / 'link' / 'data.txt'}"
    assert f"(add '{suggested}')" in refused.stderr
    env = rules(tmp_path, "bwrap", "true", suggested)
    result = run_sb(["-c", program], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "data\n"


@pytest.mark.parametrize(("provider", "py"), [*CASES, ("subprocess", "true"), ("none", "true")])
def test_unreadable_script_is_refused_before_running(
    tmp_path: Path, provider: str, py: str
) -> None:
    """Point 8: one behaviour under every provider that judges files."""

    if provider in PROVIDERS:
        provider_ok(provider)
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "job.py").write_text("print('ran')\n")
    control = run_python([str(scripts / "job.py")], cwd=tmp_path)
    assert control.stdout == "ran\n"
    (scripts / ".py-sandboxes").write_text(f"os-sandbox={provider}\npy-sandbox={py}\n")
    env = base_env(tmp_path)
    refused = run_sb(["scripts/job.py"], cwd=tmp_path, env=env)
    assert refused.returncode == 2, refused.stderr
    expected = limits.notice(
        "files.script-unreadable", True, script="scripts/job.py", directory="./scripts"
    ).text
    assert expected in refused.stderr
    assert "nothing was run" in refused.stderr and refused.stdout == ""
    # With the rule it names, the script runs.
    (scripts / ".py-sandboxes").write_text(
        f"os-sandbox={provider}\npy-sandbox={py}\nexpose-ro=./scripts\n"
    )
    allowed = run_sb(["scripts/job.py"], cwd=tmp_path, env=env)
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout == "ran\n"


def test_landlock_announces_unix_sockets_and_executables(tmp_path: Path) -> None:
    """The announced limits of landlock are said at start, and hold."""

    provider_ok("landlock")
    program = (
        "import socket, subprocess\n"
        "try:\n"
        "    socket.socket(socket.AF_UNIX)\n"
        "    print('unix ok')\n"
        "except OSError:\n"
        "    print('unix refused')\n"
        "try:\n"
        "    subprocess.run(['/usr/bin/true'], check=True)\n"
        "    print('exec ok')\n"
        "except OSError:\n"
        "    print('exec refused')\n"
    )
    control = run_python(["-c", program], cwd=tmp_path)
    assert control.stdout == "unix ok\nexec ok\n"
    result = run_sb(["-c", program], cwd=tmp_path, env=rules(tmp_path, "landlock", "false"))
    assert result.stdout == "unix refused\nexec refused\n", result.stderr
    for key in ("net.unix-sockets", "files.executables"):
        assert limits.notice(key, False).text in result.stderr
    env = rules(tmp_path, "landlock", "false", "expose-ro=/usr/bin", "landlock.unix-sockets=true")
    allowed = run_sb(["-c", program], cwd=tmp_path, env=env)
    assert allowed.stdout == "unix ok\nexec ok\n", allowed.stderr
    assert limits.notice("net.unix-sockets", False).text not in allowed.stderr


@pytest.mark.parametrize("provider", ["bwrap", "unshare"])
def test_exposed_etc_keeps_the_sandbox_host_name(tmp_path: Path, provider: str) -> None:
    """An exposure of /etc itself: the host's files, except those python-sb must write (its
    resolver, its host name), which are put over it without touching the host's."""

    provider_ok(provider)
    require(Path("/etc/hostname").is_file(), "no /etc/hostname on this machine")
    before = Path("/etc/hostname").read_bytes()
    program = "print(open('/etc/hostname').read().strip(), open('/etc/passwd').read()[:5])"
    control = run_python(["-c", program], cwd=tmp_path)
    assert control.returncode == 0
    env = rules(tmp_path, provider, "false", "expose-ro=/etc", f"{provider}.hostname=sbx")
    result = run_sb(["-c", program], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[0] == "sbx"
    assert result.stdout.split()[1] == control.stdout.split()[1]  # the host's accounts
    assert Path("/etc/hostname").read_bytes() == before


def test_explain_shows_what_landlock_enforces_and_the_run_says_the_same(tmp_path: Path) -> None:
    """Point 1: --explain no longer lists the writable directory as plainly read-write or the
    nested path as protected when it is not; its limits are the start warnings, word for word."""

    import json

    provider_ok("landlock")
    (tmp_path / "proj" / "ro").mkdir(parents=True)
    env = rules(tmp_path, "landlock", "false", "expose-rw=./proj", "expose-ro=./proj/ro")
    explained = run_sb(["--explain", "--json", "-c", "pass"], cwd=tmp_path, env=env)
    assert explained.returncode == 0, explained.stderr
    found = json.loads(explained.stdout)["provider"]["limits"]
    nested = [item for item in found if item["key"] == "files.nested-read-only"]
    assert len(nested) == 1 and nested[0]["status"] == "limit" and nested[0]["at_start"]
    text = run_sb(["--explain", "-c", "pass"], cwd=tmp_path, env=env).stdout
    assert "read-only itself, read-write entry by entry" in text
    run = run_sb(["-c", "pass"], cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    said = [item["text"] for item in found if item["at_start"]]
    for sentence in said:
        assert sentence in run.stderr


@pytest.mark.parametrize(("provider", "py"), CASES)
def test_system_link_exposure_keeps_its_name(tmp_path: Path, provider: str, py: str) -> None:
    """Point 7: ``expose-ro=/var/run`` (a link to /run on most systems)."""

    provider_ok(provider)
    require(os.path.islink("/var/run"), "/var/run is not a symbolic link here")
    program = "import os\nprint(os.path.isdir('/var/run'), sorted(os.listdir('/var/run'))[:3])"
    control = run_python(["-c", program], cwd=tmp_path)
    assert control.returncode == 0
    env = rules(tmp_path, provider, py, "expose-ro=/var/run")
    result = run_sb(["-c", program], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == control.stdout
