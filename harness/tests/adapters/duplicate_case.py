"""Answers the first case with a line that names its case twice, the others rightly
(through `airlock guard`, whose command is the first argument)."""
import json
import subprocess
import sys

guard = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
for line in sys.stdin:
    case = json.loads(line)
    guard.stdin.write(line)
    guard.stdin.flush()
    answer = guard.stdout.readline()
    if case["case"] == "c-000000":
        answer = '{"case":"other",' + answer.lstrip()[1:]
    sys.stdout.write(answer)
    sys.stdout.flush()
