/** ioredis, loaded on the first call (see loadIoredis.cjs). */
declare function loadIoredis(): typeof import('ioredis');
export = loadIoredis;
