# ruff: noqa: E401, E702, E501, SIM115
import argparse, base64, csv, dataclasses, datetime, decimal, email.message, enum, fractions
import functools, hashlib, hmac, http.client, io, itertools, json, logging, pathlib, random, re
import secrets, statistics, string, textwrap, tomllib, typing, urllib.parse, uuid, zoneinfo
import collections, contextlib, copy, difflib, heapq, inspect, locale, operator, pprint, shlex
import struct, tempfile, time, traceback, unittest.mock, warnings, weakref, xml.etree.ElementTree

logging.basicConfig(level=logging.INFO, format="%(name)s %(funcName)s %(message)s")
log = logging.getLogger("tour")
log.info("logging works")
warnings.warn("a warning")
p = argparse.ArgumentParser(); p.add_argument("--x", type=int, default=3); print(p.parse_args([]).x)
print(datetime.datetime.strptime("2024-01-02", "%Y-%m-%d").year, decimal.Decimal("1.1") + 1)
print(statistics.mean([1, 2, 3]), fractions.Fraction(1, 3), uuid.uuid4().version)
print(zoneinfo.ZoneInfo("Europe/Paris").key, tomllib.loads("a = 1"), secrets.token_hex(2).__len__())
class Color(enum.Enum):
    RED = 1
@dataclasses.dataclass
class P:
    x: int
    y: typing.Optional[int] = None
print(Color.RED, P(1), typing.get_type_hints(P))
m = unittest.mock.MagicMock(); m.f(1); print(m.f.call_count)
print(inspect.signature(lambda a, b=1: a).parameters.keys().__len__())
try:
    1 / 0
except ZeroDivisionError:
    s = traceback.format_exc(); print("traceback", len(s) > 0)
print(xml.etree.ElementTree.fromstring("<a><b/></a>").tag, email.message.EmailMessage()["x"])
print(copy.deepcopy({"a": [1]}), pprint.pformat({"b": 2}), shlex.split("a 'b c'"))
with tempfile.TemporaryDirectory() as d:
    pathlib.Path(d, "f").write_text("x"); print(sorted(p.name for p in pathlib.Path(d).iterdir()))
import mimetypes, platform, ssl
print(mimetypes.guess_type("a.txt")[0], platform.system() != "")
print("ssl", ssl.create_default_context().cert_store_stats()["x509_ca"] >= 0)
print("tour done")
