/**
 * What global setup hands to global teardown. Jest loads the two modules
 * separately, so the state lives on the process-wide globalThis.
 */
import type { ChildProcess } from 'node:child_process';
import type { ServicesFile } from './service-info';

export interface SetupState {
  services: ServicesFile;
  children: ChildProcess[];
  /** The process 'exit' listener, removed once teardown has stopped everything. */
  killOnExit: () => void;
}

const KEY = Symbol.for('sightline.testkit.setupState');
const holder = globalThis as { [KEY]?: SetupState };

export const setupState = {
  get: (): SetupState | undefined => holder[KEY],
  set: (state: SetupState): void => {
    holder[KEY] = state;
  },
  clear: (): void => {
    delete holder[KEY];
  },
};
