/** Jest setupFilesAfterEnv: every directory a test file made with tempDir() is removed after that file. */
import { removeTempDirs } from './tempDirs';

afterAll(() => removeTempDirs());
