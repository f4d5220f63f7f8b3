# rule: expose-ro=.
# rule: python-import=traceback,logging

"""Legitimate: catch a refusal and log its traceback, then go on."""

import logging
import traceback

try:
    open("../outside/secret.txt")
except PermissionError:
    traceback.print_exc()
try:
    open("../outside/secret.txt")
except PermissionError:
    logging.exception("refused, going on")
print("LEGIT DONE")
