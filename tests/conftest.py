"""Suite-wide set-up.

Ctrl-C: a process started in the background by a shell without job control (``cmd &`` in a script,
as a CI runner may start the suite) inherits SIGINT *ignored*, and so does every process it starts:
Python then installs no KeyboardInterrupt handler, and the interrupt tests (which send SIGINT to a
child, or to this process) saw solves run to their end.  Installing Python's own handler here puts
SIGINT back for the test processes, and a child started from them (exec resets a handled signal to
its default) gets Python's handler too, as it would from a terminal.  (8 tests failed that way
before; none after.)"""

import signal

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
