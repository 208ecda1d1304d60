/** Where each server's verify panel sits (`verify_panels`, migration 10), so posting again edits it. */
export interface VerifyPanelStore {
  /** The id of the panel message last posted in this channel, if any. */
  getVerifyPanel(guildId: string, channelId: string): Promise<string | undefined>;
  /** Remember the panel message of a channel, replacing the one before. */
  saveVerifyPanel(guildId: string, channelId: string, messageId: string): Promise<void>;
}
