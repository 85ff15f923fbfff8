/**
 * Jest setupFilesAfterEnv of the integration project, run in every test file.
 */
import { stopStartedProcesses } from './processes';

// jest.config.js's per-project `testTimeout` is not applied by jest (it is a
// global option), so set the integration tests' timeout here.
jest.setTimeout(120_000);

// Stop whatever this file's tests started with `startProcess` and left running.
afterAll(() => stopStartedProcesses());
