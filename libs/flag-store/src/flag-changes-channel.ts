/** The Redis channel that announces "project N's flag definitions changed" to every process. */
export const FLAG_CHANGES_CHANNEL = 'sightline:feature-flags:changed';
