#!/usr/bin/env node
// `npx vulnscan`: registers tsx so the TypeScript client runs without a build step.
'use strict'
require('tsx/cjs')
require('../cli/main.ts').main()
