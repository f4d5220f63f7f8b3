# ruff: noqa: E401, I001
import hypothesis, pygments, packaging.version, pluggy, typing_extensions, sortedcontainers, iniconfig
from hypothesis import given, strategies as st, settings
from pygments import highlight
from pygments.lexers import PythonLexer
from pygments.formatters import TerminalFormatter
print(packaging.version.Version("1.2.3") > packaging.version.Version("1.2"))
print(len(highlight("x = 1", PythonLexer(), TerminalFormatter())) > 0)
@settings(max_examples=20, database=None)
@given(st.integers())
def prop(x):
    assert x + 0 == x
prop()
print("third-party done")
