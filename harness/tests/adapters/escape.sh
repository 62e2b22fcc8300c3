#!/bin/sh
# Starts a descendant that leaves the process group (setsid) and outlives the adapter,
# appending its pid and the adapter's to the file named by $AIRLOCK_TEST_PIDS, then
# reads a case and never answers.
setsid sh -c 'echo $$ >> "$AIRLOCK_TEST_PIDS"; exec sleep 1000' </dev/null >/dev/null 2>&1 &
echo $$ >> "$AIRLOCK_TEST_PIDS"
read -r line
sleep 1000
