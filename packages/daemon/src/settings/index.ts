export {
  SETTINGS,
  SETTING_ENTRIES,
  type CommandOptions,
  type DaemonSettings,
  type DefaultedSetting,
} from './table.js';
