#!/usr/bin/env bash
# bench/run.sh — runs all benchmarks side by side; see bench/run.lua for options.
cd "$(dirname "$0")/.." && exec build/ltorch bench/run.lua "$@"
