import type { Dispatcher } from 'undici-types';

/** Host names that are WhatsApp's CDN for the double. */
export declare const CDN_HOSTS: string[];
/** A fetch() dispatcher whose CDN host names lead to `mediaHost` ("127.0.0.1:PORT"), trusting the test CA. */
export declare function cdnDispatcher(mediaHost: string): Promise<Dispatcher>;
/** Makes every fetch() of this process use cdnDispatcher(mediaHost). */
export declare function installCdn(mediaHost: string): Promise<Dispatcher>;
