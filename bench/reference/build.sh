#!/bin/sh
# Build the C reference of `rtsoak bench futex-wait-wake` (needs liburing: apt-get install liburing-dev).
set -eu
cd "$(dirname "$0")"
${CC:-cc} -O2 -Wall -Wextra -o futex_wait_wake futex_wait_wake.c -luring -lm
echo "built $(pwd)/futex_wait_wake; run: ./futex_wait_wake K WARMUP ROUNDS CYCLES CPU"
