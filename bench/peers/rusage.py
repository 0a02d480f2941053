"""Run a command and write what it cost: its CPU seconds (user + system,
its children's included) and its peak RSS in kB, to the file named first.
    rusage.py OUT -- CMD ARG..."""
import os
import signal
import subprocess
import sys

out, cmd = sys.argv[1], sys.argv[3:]
proc = subprocess.Popen(cmd)
# Stopped by a signal (the benchmark stops a whole-host agent so): the
# command gets it, and its cost is still written once it has gone.
for sig in (signal.SIGTERM, signal.SIGINT):
    signal.signal(sig, lambda s, _: proc.send_signal(s))
_, status, usage = os.wait4(proc.pid, 0)
with open(out, "w") as f:
    f.write("%.4f %d\n" % (usage.ru_utime + usage.ru_stime, usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status) if status else 0)
