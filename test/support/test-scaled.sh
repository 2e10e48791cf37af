#!/usr/bin/env bash
# The contract tests of the fast suite again, on the scaled backend (Redis and PostgreSQL): `npm test` runs them on
# the embedded backend only, to stay within minutes; CI runs this after it (`npm run test:scaled`), so that every
# contract runs on both backends. The files are those of `npm test` that ask test/helper.ts for `backends()`.
set -euo pipefail
cd "$(dirname "$0")/../.."
mapfile -t files < <(grep -rlE 'await backends\(\)' test --include='*.test.ts' \
  | grep -vE '^test/(e2e|bench|fuzz|faults|accuracy|worker|cli|scripts|lib/scanner)/|\.full\.test\.ts$' | sort)
VULNSCAN_TEST_BACKENDS=redis exec npx tap "$@" "${files[@]}"
