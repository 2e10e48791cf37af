// Tracker tokens through a CREDENTIALS_KEY rotation: sealed again under the current key with the SSH credentials
// (POST /admin/credentials/rotate), so that CREDENTIALS_KEY_PREVIOUS can go afterwards.
import type { SecretBox } from '../secrets'
import { tokenContext } from './sync'
import type { IntegrationStore } from './types'

export async function resealTokens (store: IntegrationStore, box: SecretBox): Promise<{ resealed: number, current: number }> {
  let resealed = 0
  let current = 0
  for (let offset = 0; ; offset += 100) {
    const page = await store.list({ offset, limit: 100 })
    for (const i of page.items) {
      if (box.isCurrent(i.sealedToken)) {
        current++
        continue
      }
      const plain = box.open(i.sealedToken, tokenContext(i.id))
      await store.update(i.id, { sealedToken: box.seal(plain, tokenContext(i.id)), updatedAt: i.updatedAt })
      resealed++
    }
    if (page.items.length < 100) return { resealed, current }
  }
}
