# rule: expose-ro=.
# rule: python-import=traceback,logging
# false-positive: a program printing the traceback of a caught refusal (traceback.print_exc, logging.exception) is stopped by a refusal of sys._getframe/tb_frame, because the refusal's traceback runs through the guard's frames

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
