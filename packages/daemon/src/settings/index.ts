export {
  SETTINGS,
  SETTING_ENTRIES,
  SECRET_VARIABLES,
  withoutSecrets,
  type CommandOptions,
  type DaemonSettings,
  type DefaultedSetting,
} from './table.js';
