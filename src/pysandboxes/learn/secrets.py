"""Which environment variable names look like secrets (issue 11 point 13).

Learning never grants such a variable silently, even when the program read it by name: a
library that builds a credential chain reads ``AWS_SECRET_ACCESS_KEY`` by name whether or not
the program needs AWS, and a learned rule file outlives the machine it was learned on (it is
committed, then replayed on CI where the secret exists). Learning writes such a variable as a
commented-out line under a review note (docs/learning.md says why), and audit says "looks like a
secret" next to it.

A name matches when, upper-cased, it contains one of :data:`SECRET_WORDS`, ends with one of
:data:`SECRET_SUFFIXES`, or is one of :data:`CREDENTIAL_VARIABLES` (variables that name a file
or a place holding credentials, whose own name says nothing: ``NETRC``, ``KUBECONFIG``...).
False positives (``AUTHOR_NAME``) cost one uncommented line; a false negative would grant a
secret unseen, so the words are wide.
"""

from __future__ import annotations

__all__ = ["CREDENTIAL_VARIABLES", "SECRET_WORDS", "looks_secret", "looks_secret_path"]

#: Parts of a name that mark a secret or a credential.
SECRET_WORDS: tuple[str, ...] = (
    "TOKEN",
    "SECRET",
    "KEY",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "AUTH",
    "PRIVATE",
    "COOKIE",
    "ASKPASS",
)

#: Endings that mark a password (``MYSQL_PWD``).
SECRET_SUFFIXES: tuple[str, ...] = ("_PWD", "_PASS")

#: Variables naming where credentials are kept (a file, a directory, a helper program), or a
#: connection string that usually holds a password.
CREDENTIAL_VARIABLES: frozenset[str] = frozenset(
    {
        "NETRC",
        "PGPASSFILE",
        "PGSERVICEFILE",
        "KUBECONFIG",
        "DOCKER_CONFIG",
        "GNUPGHOME",
        "AWS_CONFIG_FILE",
        "AWS_PROFILE",
        "AZURE_CONFIG_DIR",
        "CLOUDSDK_CONFIG",
        "BOTO_CONFIG",
        "GIT_CONFIG_GLOBAL",
        "NPM_CONFIG_USERCONFIG",
        "PIP_CONFIG_FILE",
        "TWINE_USERNAME",
        "DATABASE_URL",
        "REDIS_URL",
        "SENTRY_DSN",
    }
)


def looks_secret(name: str) -> bool:
    """True when ``name`` looks like a secret or a credential variable (see the docstring)."""

    upper = name.upper()
    return (
        upper in CREDENTIAL_VARIABLES
        or any(word in upper for word in SECRET_WORDS)
        or upper.endswith(SECRET_SUFFIXES)
    )


#: Directories that hold credentials (any path with one of them as a component).
SECRET_DIRECTORIES: frozenset[str] = frozenset(
    {
        ".ssh",
        ".aws",
        ".gnupg",
        ".kube",
        ".docker",
        ".azure",
        "gcloud",
        ".password-store",
        "keyrings",
        ".secrets",
        "secrets",
        "private",
    }
)

#: Files that hold credentials, by name.
SECRET_FILES: frozenset[str] = frozenset(
    {
        ".netrc",
        "_netrc",
        ".pgpass",
        ".git-credentials",
        ".pypirc",
        ".npmrc",
        ".my.cnf",
        "credentials",
        "credentials.json",
        "shadow",
        "gshadow",
    }
)

#: File endings of keys and key stores.
SECRET_FILE_SUFFIXES: tuple[str, ...] = (".pem", ".key", ".p12", ".pfx", ".jks", ".kdbx")


def looks_secret_path(path: str) -> bool:
    """True when a file rule for ``path`` would grant credentials: a component is a credential
    directory (``~/.ssh``, ``~/.aws``, ``/etc/ssl/private``...), or the last one a credential
    file (``~/.netrc``, ``id_ed25519``, ``server.key``...)."""

    parts = [part for part in path.split("/") if part]
    if any(part in SECRET_DIRECTORIES for part in parts):
        return True
    if not parts:
        return False
    name = parts[-1]
    return name in SECRET_FILES or name.startswith("id_") or name.endswith(SECRET_FILE_SUFFIXES)
