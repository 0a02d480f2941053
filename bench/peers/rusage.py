"""Run a command and write what it cost: its CPU seconds (user + system,
its children's included) and its peak RSS in kB, to the file named first.
    rusage.py OUT -- CMD ARG..."""
import os
import subprocess
import sys

out, cmd = sys.argv[1], sys.argv[3:]
proc = subprocess.Popen(cmd)
_, status, usage = os.wait4(proc.pid, 0)
with open(out, "w") as f:
    f.write("%.4f %d\n" % (usage.ru_utime + usage.ru_stime, usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status) if status else 0)
