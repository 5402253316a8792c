#!/bin/sh
# Fits the learned trust rule (src/trust/learned.rs) on the poisoned and real sets of
# benches/data/trust, metatool and reference, and writes src/trust/learned.weights; the
# threshold is chosen by 5-fold cross-validation on those sets (benches/trust/train.rs).
# Deterministic: the same data gives the same bytes.
#   scripts/train_trust.sh          train and write the weights (then rebuild, commit them)
#   scripts/train_trust.sh --check  fail unless training gives the committed bytes
set -eu
cd "$(dirname "$0")/.."
mode="${1:---train}"
case "$mode" in
--train | --check) ;;
*)
	echo "usage: scripts/train_trust.sh [--train|--check]" >&2
	exit 2
	;;
esac
exec cargo test --bench trust -- "$mode"
