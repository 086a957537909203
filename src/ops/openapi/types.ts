/** The parts of OpenAPI 3.1 (and its JSON Schema 2020-12 dialect) this gateway's document uses. */

export type SchemaType = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null';
type Scalar = string | number | boolean | null;

export interface SchemaObject {
  $ref?: string;
  type?: SchemaType | SchemaType[];
  title?: string;
  description?: string;
  properties?: Record<string, SchemaObject>;
  required?: string[];
  additionalProperties?: boolean | SchemaObject;
  items?: SchemaObject;
  minItems?: number;
  maxItems?: number;
  enum?: readonly Scalar[];
  const?: Scalar;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minProperties?: number;
  oneOf?: SchemaObject[];
  anyOf?: SchemaObject[];
  allOf?: SchemaObject[];
  contentMediaType?: string;
  default?: unknown;
  examples?: unknown[];
}

export interface MediaTypeObject {
  schema: SchemaObject;
  example?: unknown;
  encoding?: Record<string, { contentType: string }>;
}

export interface HeaderObject {
  description: string;
  required?: boolean;
  schema: SchemaObject;
}

export interface ResponseObject {
  description: string;
  headers?: Record<string, HeaderObject | { $ref: string }>;
  content?: Record<string, MediaTypeObject>;
}

export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  description?: string;
  schema: SchemaObject;
}

export interface RequestBodyObject {
  required?: boolean;
  description?: string;
  content: Record<string, MediaTypeObject>;
}

export interface OperationObject {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security?: Record<string, string[]>[];
  parameters?: (ParameterObject | { $ref: string })[];
  requestBody?: RequestBodyObject;
  responses: Record<string, ResponseObject | { $ref: string }>;
  /**
   * Set on routes served by an optional part of the daemon (metrics, docs, flows): the served
   * document lists them only when that part registered the route.
   */
  'x-gateway-part'?: string;
}

export type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'patch' | 'head' | 'options';
export type PathItemObject = Partial<Record<HttpMethod, OperationObject>> & { parameters?: (ParameterObject | { $ref: string })[] };

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string; license?: { name: string; identifier: string } };
  servers: { url: string; description?: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, PathItemObject>;
  webhooks: Record<string, PathItemObject>;
  components: {
    schemas: Record<string, SchemaObject>;
    responses: Record<string, ResponseObject>;
    parameters: Record<string, ParameterObject>;
    headers: Record<string, HeaderObject>;
    securitySchemes: Record<string, { type: 'apiKey'; in: 'header'; name: string; description: string }>;
  };
}

export const HTTP_METHODS: readonly HttpMethod[] = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
