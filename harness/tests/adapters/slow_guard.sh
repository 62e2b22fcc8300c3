#!/bin/sh
# A correct adapter that is slow: each case waits 50 ms, then the guard answers it.
# $AIRLOCK_BIN is the airlock binary.
while read -r line; do
  sleep 0.05
  printf '%s\n' "$line" | "$AIRLOCK_BIN" guard --contract schemas/review_status
done
