import { CodedError, describeValue } from '@sluice/protocol';

/**
 * A `session/set_mode`, `session/set_config_option` or `session/set_model` this daemon cannot
 * honour (`-32602`, `errorKind: 'unsupported_session_setting'`): sessions here have one model and
 * no modes or config options.
 */
export function unsupportedSetting(setting: string, value: unknown): CodedError {
  return new CodedError(
    'unsupported_session_setting',
    `${setting} ${describeValue(value)} is not supported by this daemon`,
    { setting },
  );
}
