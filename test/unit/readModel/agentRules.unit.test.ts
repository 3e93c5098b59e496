/** The agent registry: register, retire; retiring an unknown agent changes nothing; registering again makes it current. */
import { ReadModelSpec } from '../../support/readModelSpec';
import { LogBuilder, next } from './scenario';

describe('read model: agents', () => {
  it('registering adds the agent, current', () => {
    const log = new LogBuilder();
    const registeredAt = log.nextAt;
    ReadModelSpec.given([])
      .when(...next(log, (l) => l.register('@a')))
      .then([{ kind: 'agentRegistered', identity: '@a', role: 'agent', registeredAt }]);
  });

  it('retiring a registered agent marks it retired, with the time', () => {
    const log = new LogBuilder().register('@a', '@b');
    const given = log.projected();
    const retiredAt = log.nextAt;
    const when = next(log, (l) => l.retire('@b'));
    ReadModelSpec.given(given)
      .when(...when)
      .then([{ kind: 'agentRetired', identity: '@b', retiredAt }]);
    ReadModelSpec.given(given)
      .when(...when)
      .thenViews((views) =>
        expect(views.agentList()).toEqual([
          { identity: '@a', role: 'agent', registeredAt: expect.any(String), retired: false, retiredAt: null },
          { identity: '@b', role: 'agent', registeredAt: expect.any(String), retired: true, retiredAt },
        ]),
      );
  });

  it('retiring an unknown agent changes nothing', () => {
    const log = new LogBuilder().register('@a');
    const given = log.projected();
    ReadModelSpec.given(given)
      .when(...next(log, (l) => l.retire('@ghost')))
      .thenNothing();
  });

  it('registering a retired agent again makes it current', () => {
    const log = new LogBuilder().register('@a').retire('@a');
    const given = log.projected();
    const when = next(log, (l) => l.register('@a'));
    ReadModelSpec.given(given)
      .when(...when)
      .thenViews((views) =>
        expect(views.agentList()).toEqual([
          { identity: '@a', role: 'agent', registeredAt: expect.any(String), retired: false, retiredAt: null },
        ]),
      );
  });
});
