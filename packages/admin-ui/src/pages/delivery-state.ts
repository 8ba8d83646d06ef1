import { badge } from './common.js';
import type { DeliveryState } from '../types.js';

const KIND: Record<DeliveryState, string> = { pending: 'info', delivering: 'warn', delivered: 'ok', dead: 'danger' };

export function stateBadge(state: DeliveryState): HTMLElement {
  return badge(state, KIND[state] ?? 'neutral', 'delivery-state');
}
