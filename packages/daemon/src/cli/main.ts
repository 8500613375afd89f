#!/usr/bin/env node
import { runProgram } from './program.js';

// No top-level await: the installed command is this file bundled as CommonJS (launch.ts).
void runProgram(process.argv);
