export { openApiDocument, documentedRoutes, servedDocument, toOpenApiPath, type DocumentedRoute } from './document.js';
export type { OpenApiDocument, OperationObject, SchemaObject, PathItemObject } from './types.js';
