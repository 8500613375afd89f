import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENT_SESSION_HEADER } from '../../gateway/index.js';

/** qwen-code's lowest-precedence settings file, named by this variable of its environment. */
const QWEN_DEFAULTS_VARIABLE = 'QWEN_CODE_SYSTEM_DEFAULTS_PATH';

/**
 * Makes a shared agent process name the session of each model call: for qwen-code, a system
 * defaults settings file whose `customHeaders` send {@link AGENT_SESSION_HEADER} with the
 * agent's session id (`${session_id}`, filled per request once
 * `outboundCorrelation.allowDynamicHeaderValues` is on). The operator's own defaults file, if
 * the environment names one, is kept: its settings are copied in. Other agents ignore the
 * variable. The file lives in a private temporary folder until {@link remove}.
 */
export class AgentSessionHeader {
  private dir: string | undefined;
  private file: string | undefined;

  /** `env` with the variable pointing at the settings file (written on first use). */
  apply(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    this.file ??= this.write(env[QWEN_DEFAULTS_VARIABLE]);
    return { ...env, [QWEN_DEFAULTS_VARIABLE]: this.file };
  }

  /** Deletes the settings file. */
  remove(): void {
    if (this.dir !== undefined) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
    this.file = undefined;
  }

  private write(operatorFile: string | undefined): string {
    const settings = readOperatorDefaults(operatorFile);
    const model = objectAt(settings, 'model');
    const generation = objectAt(model, 'generationConfig');
    const headers = objectAt(generation, 'customHeaders');
    headers[AGENT_SESSION_HEADER] = '${session_id}';
    objectAt(settings, 'outboundCorrelation')['allowDynamicHeaderValues'] = true;
    this.dir = mkdtempSync(join(tmpdir(), 'sluice-agent-settings-'));
    const file = join(this.dir, 'system-defaults.json');
    writeFileSync(file, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
    return file;
  }
}

function readOperatorDefaults(file: string | undefined): Record<string, unknown> {
  if (file === undefined || file === '') return {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

function objectAt(parent: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = parent[key];
  if (typeof value === 'object' && value !== null && !Array.isArray(value))
    return value as Record<string, unknown>;
  const fresh: Record<string, unknown> = {};
  parent[key] = fresh;
  return fresh;
}
