"""Push characters into the input of the terminal the program inherited (TIOCSTI): the user's
shell would run them after the program exits. stdin must be that terminal."""

import fcntl
import termios
from _verdict import attempt


def inject():
    for char in b"echo pwned\n":
        fcntl.ioctl(0, termios.TIOCSTI, bytes([char]))
    return "injected"


attempt("tty_inject", inject)
