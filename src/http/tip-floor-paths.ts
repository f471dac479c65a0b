/** Jito's tip floor paths, which the gateway serves as Jito's bundles host does (tip-floor-route.ts, tip-stream.ts). */
export const TIP_FLOOR_PATH = '/api/v1/bundles/tip_floor';
export const TIP_STREAM_PATH = '/api/v1/bundles/tip_stream';
