# rule: expose-ro=.
# rule: python-import=socket
# rule: net=ALLOW|TCP|127.0.0.1|*|OUT
# needs: hosts-name
# expect: net ConnectionRefusedError

"""Objective: resolve a host name that no net= rule names (the query would leave for the DNS
server; here /etc/hosts answers), after adding it to the guard's list of local names.

``judge_name`` lets a name in ``_LOCAL_NAMES`` (``localhost``...) resolve without a rule, and
reads that set from ``pysandboxes.guard.network``'s globals at every lookup: the program
rebinds it. (The address the name stands for is then judged where it is used: here the
address rule allows it, so the connection that follows is an ordinary one.)
"""

from _harness import attempt


def payload():
    import socket

    name = open('name.txt').read().strip()
    try:
        import pysandboxes.guard.network as network
    except ImportError:  # plain python3 (the control)
        pass
    else:
        network._LOCAL_NAMES = network._LOCAL_NAMES | {name.lower()}
    answers = socket.getaddrinfo(name, 80, socket.AF_INET, socket.SOCK_STREAM)
    addresses = sorted({answer[4][0] for answer in answers})
    assert addresses == ['127.0.0.1'], addresses
    return name, addresses


attempt(payload)
