/**
 * ServerFeatures.GetSupportedMethods: the client calls it once per connection
 * and uses BatchAppend for appends when it is listed (else Append). When the
 * double runs without this service the client gets UNIMPLEMENTED and treats
 * the server as an old one (EventStoreDB 20.x), which it tolerates.
 */
import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import type { Empty } from '@eventstore/db-client/generated/shared_pb';
import { SupportedMethod, SupportedMethods } from '@eventstore/db-client/generated/serverfeatures_pb';

export const DOUBLE_SERVER_VERSION = '24.10.0-test-double';
const STREAMS = 'event_store.client.streams.Streams';

function method(serviceName: string, methodName: string): SupportedMethod {
  const supported = new SupportedMethod();
  supported.setServiceName(serviceName);
  supported.setMethodName(methodName);
  return supported;
}

export function supportedMethodsHandler(batchAppend: boolean) {
  return (_call: ServerUnaryCall<Empty, SupportedMethods>, callback: sendUnaryData<SupportedMethods>): void => {
    const response = new SupportedMethods();
    response.setEventStoreServerVersion(DOUBLE_SERVER_VERSION);
    const names = ['Read', 'Append', 'Delete', 'Tombstone', ...(batchAppend ? ['BatchAppend'] : [])];
    response.setMethodsList([
      ...names.map((name) => method(STREAMS, name)),
      method('event_store.client.server_features.ServerFeatures', 'GetSupportedMethods'),
    ]);
    callback(null, response);
  };
}
