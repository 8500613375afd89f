#!/usr/bin/env node
import { buildProgram } from './program.js';

// No top-level await: the installed command is this file bundled as CommonJS (launch.ts).
void buildProgram().parseAsync(process.argv);
