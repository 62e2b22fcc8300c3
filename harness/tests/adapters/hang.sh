#!/bin/sh
# Reads a case and never answers.
read -r line
sleep 1000
