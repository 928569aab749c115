export { MemorySource } from '../../src/outbound/memory-source.js';
