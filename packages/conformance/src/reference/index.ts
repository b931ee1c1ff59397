export { ReferenceBackend } from './backend';
