export {
  SETTINGS,
  SETTING_ENTRIES,
  SECRET_VARIABLES,
  type CommandOptions,
  type DaemonSettings,
  type DefaultedSetting,
} from './table.js';
