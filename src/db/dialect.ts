/** The two databases Pressroom runs on; migrations branch on it where their SQL differs. */
export type Dialect = 'sqlite' | 'postgres';
