/** Jest setupFilesAfterEnv: every directory a test file made with tempDir() is removed after that file. */
import { removeTempDirs } from './fixtures';

afterAll(() => removeTempDirs());
